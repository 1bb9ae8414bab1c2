import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { JWT_ALGORITHM } from './claims';

/**
 * Signing keys and the JWKS: ES256 (ECDSA P-256) key pairs, their RFC 7638 thumbprints, public JWKs and the
 * JWKS document the hub publishes.
 */

export interface PublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

export interface JwksDocument {
  keys: PublicJwk[];
}

export interface SigningKey {
  kid: string;
  privateKeyPem: string;
}

/** Where a verifier gets the JWKS from; `forceRefresh` asks for a fresh copy (an unknown kid). */
export type GetJwks = (opts: { forceRefresh: boolean }) => Promise<JwksDocument>;

function base64url(buffer: Buffer): string {
  return buffer.toString('base64url');
}

interface EcPublicCoordinates {
  x: string;
  y: string;
}

function isP256PrivateKey(key: KeyObject): boolean {
  return (
    key.type === 'private' &&
    key.asymmetricKeyType === 'ec' &&
    key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
  );
}

function coordinatesOf(key: KeyObject): EcPublicCoordinates {
  const jwk: JsonWebKey = createPublicKey(key).export({ format: 'jwk' });
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new TypeError('signing key must be an ECDSA P-256 key');
  }
  return { x: jwk.x, y: jwk.y };
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order, no whitespace. */
export function jwkThumbprint(jwk: { crv: string; kty: string; x: string; y: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return base64url(createHash('sha256').update(canonical, 'utf8').digest());
}

function toPublicJwk(coordinates: EcPublicCoordinates, kid?: string): PublicJwk {
  const base = { kty: 'EC', crv: 'P-256', x: coordinates.x, y: coordinates.y } as const;
  return { ...base, kid: kid ?? jwkThumbprint(base), alg: JWT_ALGORITHM, use: 'sig' };
}

/** Package-internal: the public JWK of a loaded key; `kid` defaults to the RFC 7638 thumbprint. */
export function publicJwkOf(key: KeyObject, kid?: string): PublicJwk {
  return toPublicJwk(coordinatesOf(key), kid);
}

/** Package-internal: reads a private key PEM and insists on ECDSA P-256. */
export function loadPrivateKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch (error) {
    throw new TypeError('signing key is not a readable private key PEM', { cause: error });
  }
  if (!isP256PrivateKey(key)) {
    throw new TypeError('signing key must be an ECDSA P-256 private key');
  }
  return key;
}

/** A fresh P-256 key pair; `kid` is the RFC 7638 thumbprint of the public key. */
export function generateSigningKey(): { kid: string; privateKeyPem: string; publicJwk: PublicJwk } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = publicJwkOf(privateKey);
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { kid: publicJwk.kid, privateKeyPem, publicJwk };
}

/** The public JWK of a P-256 private key PEM; `kid` defaults to the RFC 7638 thumbprint. */
export function publicJwkFromPrivateKeyPem(pem: string, kid?: string): PublicJwk {
  return publicJwkOf(loadPrivateKey(pem), kid);
}

/** Package-internal: true for an ES256 (EC P-256) signing JWK with a non-empty kid. */
export function isPublicJwk(value: unknown): value is PublicJwk {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const jwk = value as Record<string, unknown>;
  return (
    jwk.kty === 'EC' &&
    jwk.crv === 'P-256' &&
    typeof jwk.x === 'string' &&
    typeof jwk.y === 'string' &&
    typeof jwk.kid === 'string' &&
    jwk.kid !== '' &&
    (jwk.alg === undefined || jwk.alg === JWT_ALGORITHM) &&
    (jwk.use === undefined || jwk.use === 'sig')
  );
}

/**
 * A JWKS document with only the public members of each key (a private `d` passed in by mistake is
 * dropped). Throws on a key that is not a P-256 signing JWK or on a duplicate `kid`.
 */
export function createJwksDocument(keys: PublicJwk[]): JwksDocument {
  const seen = new Set<string>();
  const out: PublicJwk[] = [];
  for (const key of keys) {
    if (!isPublicJwk(key)) {
      throw new TypeError('JWKS keys must be ES256 (EC P-256) signing keys with a kid');
    }
    if (seen.has(key.kid)) {
      throw new TypeError(`duplicate kid in JWKS: ${key.kid}`);
    }
    seen.add(key.kid);
    out.push({ kty: 'EC', crv: 'P-256', x: key.x, y: key.y, kid: key.kid, alg: JWT_ALGORITHM, use: 'sig' });
  }
  return { keys: out };
}
