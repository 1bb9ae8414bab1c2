import { createHash } from 'node:crypto';
import {
  API_KEY_LENGTH,
  generateApiKey,
  generateOpaqueToken,
  hashApiKeySecret,
  hashOpaqueToken,
  parseApiKey,
  redactApiKey,
  verifyApiKeySecret,
  verifyOpaqueToken,
} from './api-keys';

const VALID_SECRET = Buffer.alloc(32, 7).toString('base64url');
const VALID_KEY = `svc_abcdefgh2345_${VALID_SECRET}`;

describe('generateApiKey', () => {
  it('when a key is generated, then it has the svc_<prefix>_<secret> shape and parses back', () => {
    const generated = generateApiKey();
    expect(generated.key).toHaveLength(API_KEY_LENGTH);
    expect(generated.key).toMatch(/^svc_[a-z2-7]{12}_[A-Za-z0-9_-]{43}$/);
    expect(generated.prefix).toMatch(/^[a-z2-7]{12}$/);
    expect(generated.key.startsWith(`svc_${generated.prefix}_`)).toBe(true);
    expect(generated.last4).toBe(generated.key.slice(-4));

    const parsed = parseApiKey(generated.key);
    expect(parsed).not.toBeNull();
    expect(parsed?.prefix).toBe(generated.prefix);
    expect(Buffer.from(parsed?.secret ?? '', 'base64url')).toHaveLength(32);
    expect(generated.secretHash).toBe(hashApiKeySecret(parsed?.secret ?? ''));
    expect(verifyApiKeySecret(parsed?.secret ?? '', generated.secretHash)).toBe(true);
  });

  it('when many keys are generated, then every one parses and prefixes and secrets do not repeat', () => {
    const keys = Array.from({ length: 500 }, () => generateApiKey());
    expect(keys.every((k) => parseApiKey(k.key)?.prefix === k.prefix)).toBe(true);
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(500);
    expect(new Set(keys.map((k) => k.secretHash)).size).toBe(500);
  });

  it('when the generated secret contains underscores, then parsing still splits on the first two only', () => {
    const withUnderscore = `svc_abcdefgh2345_${Buffer.from(new Uint8Array(32).fill(0xff)).toString('base64url')}`;
    expect(withUnderscore.slice(17)).toContain('_');
    expect(parseApiKey(withUnderscore)).toEqual({ prefix: 'abcdefgh2345', secret: withUnderscore.slice(17) });
  });
});

describe('parseApiKey', () => {
  it('when a well-formed key is parsed, then prefix and secret are returned', () => {
    expect(parseApiKey(VALID_KEY)).toEqual({ prefix: 'abcdefgh2345', secret: VALID_SECRET });
  });

  it.each([
    ['empty', ''],
    ['only the tag', 'svc_'],
    ['wrong tag', `sv_abcdefgh2345_${VALID_SECRET}x`],
    ['uppercase tag', `SVC_abcdefgh2345_${VALID_SECRET}`],
    ['other product tag', `sk_live_abcdefgh23_${VALID_SECRET}`],
    ['prefix too short', `svc_abcdefgh234_${VALID_SECRET}A`],
    ['prefix too long', `svc_abcdefgh23456_${VALID_SECRET.slice(1)}`],
    ['uppercase prefix', `svc_ABCDEFGH2345_${VALID_SECRET}`],
    ['underscore inside the prefix', `svc_abcd_fgh2345_${VALID_SECRET}`],
    ['extra underscores around the prefix', `svc__abcdefgh234_${VALID_SECRET}`],
    ['secret too short', `svc_abcdefgh2345_${VALID_SECRET.slice(1)}`],
    ['secret too long', `${VALID_KEY}A`],
    ['secret with padding', `svc_abcdefgh2345_${VALID_SECRET.slice(0, 42)}=`],
    ['secret with standard base64 characters', `svc_abcdefgh2345_${VALID_SECRET.slice(0, 42)}+`],
    // 'd' differs from the canonical final 'c' only in the two padding bits: same bytes, other spelling.
    ['non-canonical spelling of the same secret', `svc_abcdefgh2345_${VALID_SECRET.slice(0, 42)}d`],
    ['leading whitespace', ` ${VALID_KEY}`],
    ['trailing newline', `${VALID_KEY}\n`],
    ['non-ASCII characters', `svc_abcdefgh234é_${VALID_SECRET}`],
    ['very long input', `svc_abcdefgh2345_${'A'.repeat(100_000)}`],
    ['no underscores at all', 'svcabcdefgh2345'.padEnd(API_KEY_LENGTH, 'A')],
  ])('when the key has %s, then it is rejected without throwing', (_label, raw) => {
    expect(parseApiKey(raw)).toBeNull();
  });

  it('when the input is not a string at run time, then it is rejected without throwing', () => {
    for (const value of [undefined, null, 42, {}, ['svc'], Buffer.from(VALID_KEY)]) {
      expect(parseApiKey(value as unknown as string)).toBeNull();
    }
  });
});

describe('API key secret hashing', () => {
  it('when a secret is hashed, then the result is its SHA-256 hex', () => {
    expect(hashApiKeySecret(VALID_SECRET)).toBe(createHash('sha256').update(VALID_SECRET).digest('hex'));
  });

  it('when the presented secret matches the stored hash, then verification succeeds', () => {
    const stored = hashApiKeySecret(VALID_SECRET);
    expect(verifyApiKeySecret(VALID_SECRET, stored)).toBe(true);
    expect(verifyApiKeySecret(VALID_SECRET, stored.toUpperCase())).toBe(true);
  });

  it('when the presented secret or stored hash differs, then verification fails', () => {
    const stored = hashApiKeySecret(VALID_SECRET);
    expect(verifyApiKeySecret(`${VALID_SECRET.slice(0, 42)}E`, stored)).toBe(false);
    expect(verifyApiKeySecret('', stored)).toBe(false);
    expect(verifyApiKeySecret(VALID_SECRET, '')).toBe(false);
    expect(verifyApiKeySecret(VALID_SECRET, stored.slice(0, 63))).toBe(false);
  });
});

describe('redactApiKey', () => {
  it('when a key is redacted, then only the tag and prefix remain', () => {
    expect(redactApiKey(VALID_KEY)).toBe('svc_abcdefgh2345_…');
    expect(redactApiKey(VALID_KEY)).not.toContain(VALID_SECRET.slice(0, 8));
  });

  it('when a truncated key still shows its prefix, then the prefix is kept', () => {
    expect(redactApiKey('svc_abcdefgh2345_abc')).toBe('svc_abcdefgh2345_…');
  });

  it('when the value does not look like a key, then nothing of it is returned', () => {
    expect(redactApiKey('hunter2')).toBe('[redacted]');
    expect(redactApiKey('')).toBe('[redacted]');
    expect(redactApiKey(undefined as unknown as string)).toBe('[redacted]');
  });
});

describe('opaque tokens', () => {
  it('when an opaque token is generated, then it is <kind>_ plus 43 base64url characters', () => {
    const token = generateOpaqueToken('rly');
    expect(token).toMatch(/^rly_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token.slice(4), 'base64url')).toHaveLength(32);
    expect(generateOpaqueToken('rly')).not.toBe(token);
  });

  it.each(['', 'Relay', 'rly_x', '1rly', 'a'.repeat(17), 'r-ly'])(
    'when the kind is %j, then generation is refused',
    (kind) => {
      expect(() => generateOpaqueToken(kind)).toThrow(TypeError);
    },
  );

  it('when an opaque token is hashed and verified, then only the same token matches', () => {
    const token = generateOpaqueToken('rly');
    const stored = hashOpaqueToken(token);
    expect(stored).toBe(createHash('sha256').update(token).digest('hex'));
    expect(verifyOpaqueToken(token, stored)).toBe(true);
    expect(verifyOpaqueToken(generateOpaqueToken('rly'), stored)).toBe(false);
    expect(verifyOpaqueToken(`${token} `, stored)).toBe(false);
  });
});
