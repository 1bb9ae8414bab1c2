/**
 * Facts about a JWT read from its payload without verifying it: `svc token info` shows them, never the token.
 * Decoding is not trusting: only the hub decides whether a token is valid (`svc token health`).
 */
export interface TokenFacts {
  subject: string | null;
  audience: string | string[] | null;
  issuer: string | null;
  issued_at: string | null;
  expires_at: string | null;
  /** Seconds until expiry (negative once expired), at `now`. */
  expires_in_seconds: number | null;
  expired: boolean;
  /** The token's id (`jti`): not a secret, it names the token in audit records. */
  token_id: string | null;
  /** Scopes carried by the token, when it carries any (agent tokens get theirs from the hub per request). */
  scopes: string[] | null;
  /** The other non-registered claims whose values are plain facts (workspace, host, name). */
  claims: Record<string, string | number | boolean>;
}

export class TokenDecodeError extends Error {
  constructor(reason: string) {
    super(`the token cannot be decoded (${reason})`);
    this.name = 'TokenDecodeError';
  }
}

const REGISTERED = new Set(['iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'jti', 'scope', 'scopes']);

function isoFromSeconds(value: unknown): string | null {
  return typeof value === 'number' && Number.isFinite(value) ? new Date(value * 1000).toISOString() : null;
}

function scopesOf(payload: Record<string, unknown>): string[] | null {
  if (Array.isArray(payload.scopes)) return payload.scopes.filter((s): s is string => typeof s === 'string');
  if (typeof payload.scope === 'string') return payload.scope.split(/\s+/).filter(Boolean);
  return null;
}

/** Reads the payload of a compact JWT (`header.payload.signature`). Throws {@link TokenDecodeError}. */
export function decodeTokenFacts(token: string, now: number = Date.now()): TokenFacts {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[1]) throw new TokenDecodeError('not a compact JWT');
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw new TokenDecodeError('the payload is not JSON');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new TokenDecodeError('the payload is not an object');
  }
  const p = payload as Record<string, unknown>;
  const exp = typeof p.exp === 'number' ? p.exp : null;
  const aud = p.aud;
  const claims: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(p)) {
    if (REGISTERED.has(key)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      claims[key] = value;
  }
  return {
    subject: typeof p.sub === 'string' ? p.sub : null,
    audience:
      typeof aud === 'string' || (Array.isArray(aud) && aud.every((a) => typeof a === 'string'))
        ? (aud as string | string[])
        : null,
    issuer: typeof p.iss === 'string' ? p.iss : null,
    issued_at: isoFromSeconds(p.iat),
    expires_at: isoFromSeconds(exp),
    expires_in_seconds: exp === null ? null : Math.floor(exp - now / 1000),
    expired: exp !== null && exp * 1000 <= now,
    token_id: typeof p.jti === 'string' ? p.jti : null,
    scopes: scopesOf(p),
    claims,
  };
}
