/**
 * Secrets never appear in the deployment files: compose reads them from infra/.env, Kubernetes from Secrets
 * the operator creates. To still parse every service's environment with its app's schema, each secret is
 * replaced by a syntactically valid dummy of the shape its name promises. A secret whose shape is not known
 * here is reported, so a new secret cannot slip past the check unparsed.
 */

const DUMMY_TOKEN = 'dummy-secret-value-for-the-manifest-check-0123456789';

const SHAPES: Array<{ test: RegExp; value: (name: string) => string }> = [
  { test: /^DATABASE_URL$/, value: () => 'postgresql://svc:dummy-password@postgres.invalid:5432/svc' },
  { test: /(^|_)REDIS_URL$/, value: () => 'rediss://:dummy-password@redis.invalid:6380' },
  { test: /_(ENCRYPTION|SESSION)_KEYS$/, value: () => `k1:${Buffer.alloc(32, 7).toString('base64')}` },
  { test: /_EMAIL$/, value: () => 'owner@example.com' },
  { test: /_EXPIRES_AT$/, value: () => '2030-01-01T00:00:00.000Z' },
  { test: /_INSTANCE_ID$/, value: () => 'rti_dummy0123456789' },
  { test: /(^|_)(TOKEN|API_KEY|PASSWORD|SECRET|CREDENTIAL)$/, value: () => DUMMY_TOKEN },
  { test: /_SLUG$|^SVC_WORKSPACE$/, value: () => 'acme' },
  { test: /_NAME$/, value: () => 'Acme' },
];

/** A dummy of the right shape for a secret named `name`, or undefined when its shape is unknown. */
export function dummySecret(name: string): string | undefined {
  return SHAPES.find((shape) => shape.test.test(name))?.value(name);
}

/**
 * The Secrets an operator is told to create, read from the instructions themselves
 * (`kubectl … create secret generic NAME \ --from-literal=KEY=…`): name → keys.
 */
export function secretsFromInstructions(markdown: string): Map<string, Set<string>> {
  const secrets = new Map<string, Set<string>>();
  const commands = markdown.replace(/\\\n/g, ' ').split('\n');
  for (const command of commands) {
    const created = /create secret generic\s+([a-z0-9-]+)/.exec(command);
    if (!created) continue;
    const keys = secrets.get(created[1]!) ?? new Set<string>();
    for (const match of command.matchAll(/--from-(?:literal|file)=([A-Za-z_][A-Za-z0-9_]*)=/g))
      keys.add(match[1]!);
    secrets.set(created[1]!, keys);
  }
  return secrets;
}
