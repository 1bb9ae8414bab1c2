import { createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { verify as jwtVerify } from 'jsonwebtoken';
import { JWT_ALGORITHM, RESERVED_CLAIM_SET, isAudience } from './claims';
import type { Audience } from './claims';
import { TokenError } from './errors';
import { isPublicJwk } from './keys';
import type { GetJwks, JwksDocument, PublicJwk } from './keys';

/**
 * Verifies ES256 tokens against a JWKS source. The header is checked before any key is looked up, so
 * `alg: none`, HS256 with a public key as the HMAC secret (algorithm confusion) and every other algorithm
 * are rejected without touching key material; claims are checked after the signature, each failure with
 * its own reason.
 */

export interface TokenVerifierOptions {
  issuer: string;
  getJwks: GetJwks;
  /** Allowed clock skew for `exp`, `nbf` and `iat`; default 30 seconds. */
  clockToleranceSeconds?: number;
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

export interface VerifiedToken {
  sub: string;
  aud: Audience;
  jti: string;
  exp: number;
  iat: number;
  /** Every payload member except the registered claims (iss, sub, aud, iat, exp, nbf, jti). */
  claims: Record<string, unknown>;
}

export interface TokenVerifier {
  /**
   * Resolves with the verified token or rejects with `TokenError`. An error thrown by `getJwks`
   * (e.g. `JwksUnavailableError`) is passed through unchanged: it is not a verdict on the token.
   */
  verify(token: string, expected: { audience: Audience | Audience[] }): Promise<VerifiedToken>;
}

/** Upper bound on accepted token length; our tokens are a few hundred bytes. */
const MAX_TOKEN_LENGTH = 8192;
const BASE64URL_SEGMENT = /^[A-Za-z0-9_-]+$/;
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

function decodeJsonObject(segment: string): Record<string, unknown> | null {
  if (!BASE64URL_SEGMENT.test(segment)) {
    return null;
  }
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function isNumericDate(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

export function createTokenVerifier(options: TokenVerifierOptions): TokenVerifier {
  const { issuer, getJwks } = options;
  const now = options.now ?? Date.now;
  const tolerance = options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (typeof issuer !== 'string' || issuer === '') {
    throw new TypeError('issuer must be a non-empty string');
  }
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError('clockToleranceSeconds must be a non-negative number');
  }
  // Keyed by the JWK object: a JWKS source returns the same objects until it refreshes.
  const publicKeys = new WeakMap<PublicJwk, KeyObject>();

  function publicKeyFor(jwk: PublicJwk): KeyObject | null {
    const cached = publicKeys.get(jwk);
    if (cached) {
      return cached;
    }
    try {
      const key = createPublicKey({
        key: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y },
        format: 'jwk',
      });
      publicKeys.set(jwk, key);
      return key;
    } catch {
      return null;
    }
  }

  async function findKey(kid: string): Promise<KeyObject | null> {
    const pick = (doc: JwksDocument): PublicJwk | undefined =>
      Array.isArray(doc?.keys) ? doc.keys.find((key) => isPublicJwk(key) && key.kid === kid) : undefined;
    let jwk = pick(await getJwks({ forceRefresh: false }));
    if (!jwk) {
      // A kid we have not seen may be a freshly rotated key: refresh once (the JWKS source rate-limits).
      jwk = pick(await getJwks({ forceRefresh: true }));
    }
    return jwk ? publicKeyFor(jwk) : null;
  }

  return {
    async verify(token: string, expected: { audience: Audience | Audience[] }): Promise<VerifiedToken> {
      const accepted: readonly Audience[] = Array.isArray(expected.audience)
        ? expected.audience
        : [expected.audience];

      // 1. Structure, read before any key material is used.
      if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
        throw new TokenError('malformed');
      }
      const parts = token.split('.');
      if (parts.length !== 3) {
        throw new TokenError('malformed');
      }
      const [headerSegment = '', payloadSegment = '', signatureSegment = ''] = parts;
      const header = decodeJsonObject(headerSegment);
      const payload = decodeJsonObject(payloadSegment);
      if (!header || !payload || (signatureSegment !== '' && !BASE64URL_SEGMENT.test(signatureSegment))) {
        throw new TokenError('malformed');
      }
      if (typeof header.alg !== 'string') {
        throw new TokenError('malformed');
      }

      // 2. Algorithm allow-list before key lookup (rejects `none` and HS256 confusion outright).
      if (header.alg !== JWT_ALGORITHM) {
        throw new TokenError('unsupported_algorithm');
      }
      // No header extension is understood, so a token that marks one critical must be rejected (RFC 7515).
      if (header.crit !== undefined || typeof header.kid !== 'string' || header.kid === '') {
        throw new TokenError('malformed');
      }
      if (signatureSegment === '') {
        throw new TokenError('bad_signature');
      }

      // 3. Key lookup by kid.
      const key = await findKey(header.kid);
      if (!key) {
        throw new TokenError('unknown_key');
      }

      // 4. Signature. Claims are checked below so that each failure has a precise reason.
      try {
        jwtVerify(token, key, { algorithms: [JWT_ALGORITHM], ignoreExpiration: true, ignoreNotBefore: true });
      } catch {
        throw new TokenError('bad_signature');
      }

      // 5. Claims.
      const { iss, sub, aud, iat, exp, nbf, jti } = payload;
      if (
        typeof sub !== 'string' ||
        sub === '' ||
        typeof jti !== 'string' ||
        jti === '' ||
        !isNumericDate(iat) ||
        !isNumericDate(exp) ||
        (nbf !== undefined && !isNumericDate(nbf))
      ) {
        throw new TokenError('malformed');
      }
      if (iss !== issuer) {
        throw new TokenError('wrong_issuer');
      }
      if (!isAudience(aud) || !accepted.includes(aud)) {
        throw new TokenError('wrong_audience');
      }
      const nowSeconds = now() / 1000;
      if (nowSeconds >= exp + tolerance) {
        throw new TokenError('expired');
      }
      if ((nbf !== undefined && nbf > nowSeconds + tolerance) || iat > nowSeconds + tolerance) {
        throw new TokenError('not_yet_valid');
      }

      const claims: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(payload)) {
        if (!RESERVED_CLAIM_SET.has(name)) {
          claims[name] = value;
        }
      }
      return { sub, aud, jti, exp, iat, claims };
    },
  };
}
