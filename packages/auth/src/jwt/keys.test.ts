import { createHash, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createJwksDocument, generateSigningKey, jwkThumbprint, publicJwkFromPrivateKeyPem } from './keys';
import type { PublicJwk } from './keys';

const keyA = generateSigningKey();
const keyB = generateSigningKey();

describe('signing keys', () => {
  it('when a signing key is generated, then its public JWK is a P-256 ES256 signing key named by its thumbprint', () => {
    expect(keyA.publicJwk).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      y: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      kid: keyA.kid,
      alg: 'ES256',
      use: 'sig',
    });
    const canonical = `{"crv":"P-256","kty":"EC","x":"${keyA.publicJwk.x}","y":"${keyA.publicJwk.y}"}`;
    expect(keyA.kid).toBe(createHash('sha256').update(canonical).digest('base64url'));
    expect(keyA.privateKeyPem).toContain('-----BEGIN PRIVATE KEY-----');
    expect(keyA.kid).not.toBe(keyB.kid);
  });

  it('when a thumbprint is computed, then member order and optional members do not change it', () => {
    const { x, y } = keyA.publicJwk;
    expect(jwkThumbprint({ y, x, kty: 'EC', crv: 'P-256' })).toBe(keyA.kid);
  });

  it('when the public JWK is derived from the private PEM, then it matches the generated one', () => {
    expect(publicJwkFromPrivateKeyPem(keyA.privateKeyPem)).toEqual(keyA.publicJwk);
    expect(publicJwkFromPrivateKeyPem(keyA.privateKeyPem, 'hub-2025-01')).toEqual({
      ...keyA.publicJwk,
      kid: 'hub-2025-01',
    });
  });

  it('when the PEM is not a P-256 private key, then deriving a JWK is refused', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    });
    const publicPem = createPublicKey(keyA.privateKeyPem).export({ type: 'spki', format: 'pem' });
    expect(() => publicJwkFromPrivateKeyPem(rsa.toString())).toThrow(TypeError);
    expect(() => publicJwkFromPrivateKeyPem(p384.toString())).toThrow(TypeError);
    expect(() => publicJwkFromPrivateKeyPem(publicPem.toString())).toThrow(TypeError);
    expect(() => publicJwkFromPrivateKeyPem('not a pem')).toThrow(TypeError);
  });
});

describe('createJwksDocument', () => {
  it('when a JWK carries private or extra members, then only the public members are published', () => {
    const leaky = { ...keyA.publicJwk, d: 'private-part', ext: true } as PublicJwk;
    expect(createJwksDocument([leaky])).toEqual({ keys: [keyA.publicJwk] });
  });

  it('when two keys share a kid or a key is not P-256, then the document is refused', () => {
    expect(() => createJwksDocument([keyA.publicJwk, { ...keyB.publicJwk, kid: keyA.kid }])).toThrow(
      /duplicate kid/,
    );
    expect(() => createJwksDocument([{ ...keyA.publicJwk, crv: 'P-384' } as unknown as PublicJwk])).toThrow(
      TypeError,
    );
  });
});
