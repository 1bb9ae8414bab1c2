import {
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
} from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/**
 * Hostile bearer tokens for the security suites: each is built against a service's real signing key and must be
 * refused (401 `credential_invalid`), while `valid`, built the same way with nothing wrong, must be accepted, so
 * a refusal proves the check and not a broken token factory.
 */

export interface JwtAttackInput {
  /** The issuer's real signing key (ES256, P-256). */
  signingKey: { kid: string; privateKeyPem: string };
  issuer: string;
  audience: string;
  subject: string;
  /** Private claims of a genuine token of this audience (`email`, `workspace_id`, …). */
  claims?: Record<string, unknown>;
  /** A genuine token the service issued to someone else, whose signature is spliced onto this payload. */
  otherToken: string;
}

export interface JwtAttack {
  name: string;
  token: string;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function es256(key: KeyObject, header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

function hs256(
  secret: string | Buffer,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

/** The genuine token of `input` and every hostile variant of it. */
export function jwtAttacks(input: JwtAttackInput, now = Date.now()): { valid: string; attacks: JwtAttack[] } {
  const key = createPrivateKey(input.signingKey.privateKeyPem);
  const publicKey = createPublicKey(key);
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const publicDer = publicKey.export({ type: 'spki', format: 'der' });
  const publicJwk = {
    ...publicKey.export({ format: 'jwk' }),
    kid: input.signingKey.kid,
    alg: 'ES256',
    use: 'sig',
  };
  const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const strangerJwk = stranger.publicKey.export({ format: 'jwk' });
  const iat = Math.floor(now / 1000);
  const header = { alg: 'ES256', typ: 'JWT', kid: input.signingKey.kid };
  const payload = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
    ...input.claims,
    iss: input.issuer,
    sub: input.subject,
    aud: input.audience,
    iat,
    exp: iat + 600,
    jti: randomUUID(),
    ...over,
  });
  const without = (name: string) => {
    const p = payload();
    delete p[name];
    return p;
  };
  const valid = es256(key, header, payload());
  const [validHead, validBody, validSignature] = valid.split('.') as [string, string, string];
  const otherSignature = input.otherToken.split('.')[2] ?? '';
  const otherAudiences = ['participant', 'agent', 'service', 'runtime', 'console'].filter(
    (a) => a !== input.audience,
  );

  const attacks: JwtAttack[] = [
    { name: 'alg none, no signature', token: `${b64({ ...header, alg: 'none' })}.${validBody}.` },
    ...['None', 'NONE', 'nOnE'].map((alg) => ({
      name: `alg ${alg}, no signature`,
      token: `${b64({ ...header, alg })}.${validBody}.`,
    })),
    {
      name: 'alg none carrying the genuine signature',
      token: `${b64({ ...header, alg: 'none' })}.${validBody}.${validSignature}`,
    },
    {
      name: 'HS256 keyed with the public key PEM',
      token: hs256(publicPem, { ...header, alg: 'HS256' }, payload()),
    },
    {
      name: 'HS256 keyed with the public key PEM without its final newline',
      token: hs256(publicPem.trimEnd(), { ...header, alg: 'HS256' }, payload()),
    },
    {
      name: 'HS256 keyed with the public key DER',
      token: hs256(publicDer, { ...header, alg: 'HS256' }, payload()),
    },
    {
      name: 'HS256 keyed with the published JWK',
      token: hs256(JSON.stringify(publicJwk), { ...header, alg: 'HS256' }, payload()),
    },
    {
      name: 'HS256 keyed with the JWK x coordinate',
      token: hs256(String(publicJwk.x), { ...header, alg: 'HS256' }, payload()),
    },
    { name: 'ES384 header on an ES256 signature', token: es256(key, { ...header, alg: 'ES384' }, payload()) },
    { name: 'expired an hour ago', token: es256(key, header, payload({ iat: iat - 7200, exp: iat - 3600 })) },
    { name: 'not valid for another hour (nbf)', token: es256(key, header, payload({ nbf: iat + 3600 })) },
    {
      name: 'issued an hour in the future (iat)',
      token: es256(key, header, payload({ iat: iat + 3600, exp: iat + 4200 })),
    },
    { name: 'no expiry', token: es256(key, header, without('exp')) },
    ...otherAudiences.map((aud) => ({
      name: `audience ${aud}`,
      token: es256(key, header, payload({ aud })),
    })),
    {
      name: 'audience as an array holding the right one',
      token: es256(key, header, payload({ aud: [input.audience, 'service'] })),
    },
    { name: 'no audience', token: es256(key, header, without('aud')) },
    { name: 'another issuer', token: es256(key, header, payload({ iss: 'http://evil.example.test' })) },
    { name: 'no issuer', token: es256(key, header, without('iss')) },
    {
      name: 'unknown kid, signed by the real key',
      token: es256(key, { ...header, kid: 'no-such-kid' }, payload()),
    },
    { name: 'no kid', token: es256(key, { alg: 'ES256', typ: 'JWT' }, payload()) },
    { name: 'the real kid, signed by another key', token: es256(stranger.privateKey, header, payload()) },
    {
      name: "another key embedded in the header (jwk) with that key's kid",
      token: es256(
        stranger.privateKey,
        { ...header, kid: 'attacker', jwk: { ...strangerJwk, kid: 'attacker' } },
        payload(),
      ),
    },
    {
      name: 'a key set URL in the header (jku) with an unknown kid',
      token: es256(
        stranger.privateKey,
        { ...header, kid: 'attacker', jku: 'http://127.0.0.1:9/jwks.json' },
        payload(),
      ),
    },
    { name: 'a critical header extension', token: es256(key, { ...header, crit: ['exp'] }, payload()) },
    {
      name: 'tampered payload (another subject) under the genuine signature',
      token: `${validHead}.${b64(payload({ sub: `${input.subject}x` }))}.${validSignature}`,
    },
    {
      name: 'the signature of another genuine token',
      token: `${validHead}.${validBody}.${otherSignature}`,
    },
    { name: 'signature stripped', token: `${validHead}.${validBody}.` },
    { name: 'signature bit-flipped', token: `${validHead}.${validBody}.${flipLastBit(validSignature)}` },
  ];
  return { valid, attacks };
}

function flipLastBit(segment: string): string {
  const bytes = Buffer.from(segment, 'base64url');
  bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 1;
  return bytes.toString('base64url');
}
