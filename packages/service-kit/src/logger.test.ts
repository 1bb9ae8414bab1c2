import { Writable } from 'node:stream';
import { createLogger } from './logger';
import { redactValue, scrubSecrets } from './secrets';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger({ name: 'test', destination: stream }) };
}

const apiKey = 'svc_abcdefgh1234_' + 'A'.repeat(43);
const jwt = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJwcnRfMSJ9.c2lnbmF0dXJlLXZhbHVl';
const relayToken = 'rly_' + 'b'.repeat(43);
const signingSecret = 'whsec_' + 'c'.repeat(32);
const providerKey = 'sk-' + 'd'.repeat(40);
const pat = 'ghp_' + 'e'.repeat(36);

describe('secret redaction', () => {
  test('when a message embeds every kind of secret, then none of them is written', () => {
    const { lines, logger } = capture();
    logger.info(
      `calling with ${apiKey} and Bearer ${jwt} relay ${relayToken} ${signingSecret} ${providerKey} ${pat}`,
    );
    const out = lines.join('');
    for (const secret of [apiKey, jwt, relayToken, signingSecret, providerKey, pat])
      expect(out).not.toContain(secret);
    expect(out).toContain('svc_abcdefgh1234_[REDACTED]');
  });

  test('when secret fields appear at any depth, then their values are replaced', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        headers: { authorization: `Bearer ${jwt}`, 'x-api-key': apiKey, 'x-svc-relay-token': relayToken },
        config: {
          auth: { relay_token: relayToken, workspace_api_key: apiKey },
          nested: [{ password: 'hunter2hunter2' }],
        },
        signing_secret: signingSecret,
      },
      'config pulled',
    );
    const out = lines.join('');
    for (const secret of [apiKey, jwt, relayToken, signingSecret, 'hunter2hunter2'])
      expect(out).not.toContain(secret);
    expect(JSON.parse(out).config.auth.relay_token).toBe('[REDACTED]');
  });

  test('when an error message and stack carry a secret, then the logged error is scrubbed', () => {
    const { lines, logger } = capture();
    logger.error(
      { err: new Error(`connect postgresql://svc:s3cretpass@db:5432/x failed for ${apiKey}`) },
      'boom',
    );
    const out = lines.join('');
    expect(out).not.toContain('s3cretpass');
    expect(out).not.toContain(apiKey);
    expect(out).toContain('postgresql://svc:[REDACTED]@db');
  });

  test('when a private key is logged, then it is masked whole', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49\n-----END PRIVATE KEY-----';
    expect(scrubSecrets(`key: ${pem}`)).toBe('key: [REDACTED_PRIVATE_KEY]');
  });

  test('when a value is cyclic, then redaction terminates', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(redactValue(a)).toEqual({ name: 'a', self: '[Circular]' });
  });

  test('when ordinary text is logged, then it is unchanged', () => {
    expect(scrubSecrets('invocation inv_123 completed in 42 ms')).toBe(
      'invocation inv_123 completed in 42 ms',
    );
  });
});
