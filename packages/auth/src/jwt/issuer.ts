import { randomUUID } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { sign as jwtSign } from 'jsonwebtoken';
import { AUDIENCES, JWT_ALGORITHM, RESERVED_CLAIM_SET, isAudience } from './claims';
import type { Audience } from './claims';
import { createJwksDocument, loadPrivateKey, publicJwkOf } from './keys';
import type { JwksDocument, SigningKey } from './keys';

export interface TokenIssuerOptions {
  issuer: string;
  /** Every key the issuer holds (old and new during a rotation); only `activeKid` signs. */
  keys: SigningKey[];
  activeKid: string;
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

export interface IssueInput {
  audience: Audience;
  subject: string;
  ttlSeconds: number;
  /** Private claims (e.g. workspace id). Reserved claims are rejected. */
  claims?: Record<string, unknown>;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
  jti: string;
}

export interface TokenIssuer {
  issue(input: IssueInput): IssuedToken;
  /** The public JWKS for every key this issuer holds (what the hub serves at `/.well-known/jwks.json`). */
  jwks(): JwksDocument;
}

export function createTokenIssuer(options: TokenIssuerOptions): TokenIssuer {
  const { issuer, activeKid } = options;
  const now = options.now ?? Date.now;
  if (typeof issuer !== 'string' || issuer === '') {
    throw new TypeError('issuer must be a non-empty string');
  }
  const loaded = new Map<string, KeyObject>();
  for (const key of options.keys) {
    if (typeof key.kid !== 'string' || key.kid === '') {
      throw new TypeError('every signing key needs a non-empty kid');
    }
    if (loaded.has(key.kid)) {
      throw new TypeError(`duplicate signing key kid: ${key.kid}`);
    }
    loaded.set(key.kid, loadPrivateKey(key.privateKeyPem));
  }
  const activeKey = loaded.get(activeKid);
  if (!activeKey) {
    throw new TypeError('activeKid does not name one of the signing keys');
  }
  const jwks = createJwksDocument([...loaded].map(([kid, key]) => publicJwkOf(key, kid)));

  return {
    issue(input: IssueInput): IssuedToken {
      if (!isAudience(input.audience)) {
        throw new TypeError(`audience must be one of ${AUDIENCES.join(', ')}`);
      }
      if (typeof input.subject !== 'string' || input.subject === '') {
        throw new TypeError('subject must be a non-empty string');
      }
      if (!Number.isSafeInteger(input.ttlSeconds) || input.ttlSeconds <= 0) {
        throw new RangeError('ttlSeconds must be a positive integer');
      }
      const claims = input.claims ?? {};
      const reserved = Object.keys(claims).filter((name) => RESERVED_CLAIM_SET.has(name));
      if (reserved.length > 0) {
        throw new TypeError(`claims may not set reserved claims: ${reserved.join(', ')}`);
      }
      const iat = Math.floor(now() / 1000);
      const exp = iat + input.ttlSeconds;
      const jti = randomUUID();
      const payload = { ...claims, iss: issuer, sub: input.subject, aud: input.audience, iat, exp, jti };
      const token = jwtSign(payload, activeKey, {
        algorithm: JWT_ALGORITHM,
        header: { alg: JWT_ALGORITHM, typ: 'JWT', kid: activeKid },
      });
      return { token, expiresAt: new Date(exp * 1000), jti };
    },
    jwks(): JwksDocument {
      return { keys: jwks.keys.map((key) => ({ ...key })) };
    },
  };
}
