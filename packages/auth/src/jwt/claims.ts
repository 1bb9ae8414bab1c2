/**
 * ES256 JSON Web Tokens: the hub issues, every service verifies against the hub's JWKS.
 *
 * Only ES256 (ECDSA P-256 / SHA-256) exists here. This module holds what issuer and verifier agree on: the
 * algorithm, the audiences and the registered claims the issuer sets itself.
 */

export const JWT_ALGORITHM = 'ES256';

/** `console`: a console ticket, accepted only by a runtime host's console router and the agent it names. */
export const AUDIENCES = ['participant', 'agent', 'service', 'runtime', 'console'] as const;
export type Audience = (typeof AUDIENCES)[number];

export function isAudience(value: unknown): value is Audience {
  return typeof value === 'string' && (AUDIENCES as readonly string[]).includes(value);
}

/** Registered claims set by the issuer; `claims` passed to `issue` may not contain them. */
export const RESERVED_CLAIMS = ['iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'jti'] as const;

/** Package-internal: {@link RESERVED_CLAIMS} as a set. */
export const RESERVED_CLAIM_SET: ReadonlySet<string> = new Set(RESERVED_CLAIMS);
