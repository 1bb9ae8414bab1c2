/**
 * Reads infra/docker-compose.yml as `docker compose` would with infra/.env copied from infra/.env.example:
 * `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?message}`, `${VAR?message}` and `$$` are
 * interpolated. A variable the example leaves empty for the operator to fill in (a password, a key) gets a
 * dummy of its shape and is recorded as a placeholder; a variable compose uses that the example does not
 * list at all is a problem (the operator would never know to set it).
 */
import { parse } from 'yaml';
import { appOfImage, entryOf } from './apps';
import type { Deployment, Endpoint, Workload } from './model';
import { dummySecret } from './secrets';

export function parseEnvFile(text: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) values.set(match[1]!, match[2]!.trim().replace(/^(['"])(.*)\1$/, '$2'));
  }
  return values;
}

interface ComposeService {
  image?: string;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: Array<string | { target: number }>;
  healthcheck?: { test?: string[] | string };
  depends_on?: Record<string, { condition?: string }> | string[];
  profiles?: string[];
  'x-env-from-setup'?: { service?: string; file?: string; variables?: string[] };
}

export function readCompose(input: { composeText: string; envExampleText: string }): Deployment {
  const origin = 'compose';
  const problems: string[] = [];
  const example = parseEnvFile(input.envExampleText);
  const placeholdersUsed = new Set<string>();

  const interpolate = (raw: string, where: string): string =>
    raw.replace(
      /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
      (whole, name?: string, op?: string, arg?: string) => {
        if (whole === '$$') return '$';
        const listed = example.has(name!);
        if (!listed) {
          const hasDefault = op === ':-' || op === '-';
          if (!hasDefault)
            problems.push(`${where}: \${${name}} is not in infra/.env.example, so an operator never sets it`);
          return hasDefault ? arg! : '';
        }
        const value = example.get(name!)!;
        if (value !== '') return value;
        const dummy = dummySecret(name!);
        if (dummy !== undefined) {
          placeholdersUsed.add(name!);
          return dummy;
        }
        if (op === ':?' || op === '?') {
          problems.push(`${where}: \${${name}} must be filled in, and the check knows no shape for it`);
          return '';
        }
        return op === ':-' ? arg! : '';
      },
    );

  const doc = parse(input.composeText) as { services?: Record<string, ComposeService> };
  const services = doc.services ?? {};
  const workloads: Workload[] = [];
  const endpoints: Endpoint[] = [];
  for (const [name, service] of Object.entries(services)) {
    const app = appOfImage(service.image);
    if (!app) continue;
    const command = [service.entrypoint ?? [], service.command ?? []].flatMap((part) =>
      Array.isArray(part) ? part : [part],
    );
    const env: Record<string, string> = {};
    const placeholders = new Set<string>();
    const rawEnv = service.environment ?? {};
    const pairs: Array<[string, string]> = Array.isArray(rawEnv)
      ? rawEnv.map((item) => {
          const at = item.indexOf('=');
          return at < 0 ? [item, ''] : [item.slice(0, at), item.slice(at + 1)];
        })
      : Object.entries(rawEnv).map(([key, value]) => [key, value === null ? '' : String(value)]);
    for (const [key, value] of pairs) {
      placeholdersUsed.clear();
      env[key] = interpolate(value, `compose service ${name}, ${key}`);
      if (placeholdersUsed.size > 0) placeholders.add(key);
    }
    // Variables a one-shot setup service writes at run time (e.g. a workspace API key that exists only after
    // bootstrap): the container must wait for that service and source its file.
    const setup = service['x-env-from-setup'];
    if (setup) {
      const condition = Array.isArray(service.depends_on)
        ? undefined
        : service.depends_on?.[setup.service ?? '']?.condition;
      if (!setup.service || !services[setup.service])
        problems.push(`compose service ${name}: x-env-from-setup names no existing setup service`);
      else if (condition !== 'service_completed_successfully')
        problems.push(
          `compose service ${name}: must depend on ${setup.service} with condition service_completed_successfully`,
        );
      if (!setup.file || !command.join(' ').includes(setup.file))
        problems.push(
          `compose service ${name}: its command must read the setup file ${setup.file ?? '(none)'}`,
        );
      for (const variable of setup.variables ?? []) {
        const dummy = dummySecret(variable);
        if (dummy === undefined) problems.push(`compose service ${name}: no known shape for ${variable}`);
        else {
          env[variable] = dummy;
          placeholders.add(variable);
        }
      }
    }
    const ports: Workload['ports'] = [];
    for (const published of service.ports ?? []) {
      const target = typeof published === 'string' ? Number(published.split(':').pop()) : published.target;
      ports.push({
        port: target,
        what: `published port ${String(typeof published === 'string' ? published : target)}`,
      });
    }
    const test = service.healthcheck?.test;
    const testText = Array.isArray(test) ? test.join(' ') : (test ?? '');
    for (const match of testText.matchAll(/127\.0\.0\.1:(\d+)\//g))
      ports.push({ port: Number(match[1]), what: 'healthcheck' });
    workloads.push({ origin, name, app, entry: entryOf(command), env, placeholders, ports });
  }
  // Inside compose, a service's name resolves to its container, on any port (-1): the URL's port must be the
  // one its process listens on.
  for (const workload of workloads)
    endpoints.push({ host: workload.name, port: -1, workload: workload.name, targetPort: -1 });
  return { origin, workloads, endpoints, problems };
}
