import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';
import { sign as jwtSign, verify as jwtVerify } from 'jsonwebtoken';

/**
 * ES256 JSON Web Tokens: the hub issues, every service verifies against the hub's JWKS.
 *
 * Only ES256 (ECDSA P-256 / SHA-256) exists here. The verifier checks the header itself before it looks
 * up a key, so `alg: none`, HS256 with a public key as the HMAC secret (algorithm confusion) and every
 * other algorithm are rejected without touching key material.
 */

export const JWT_ALGORITHM = 'ES256';

export const AUDIENCES = ['participant', 'agent', 'service', 'runtime'] as const;
export type Audience = (typeof AUDIENCES)[number];

export function isAudience(value: unknown): value is Audience {
  return typeof value === 'string' && (AUDIENCES as readonly string[]).includes(value);
}

/** Registered claims set by the issuer; `claims` passed to `issue` may not contain them. */
export const RESERVED_CLAIMS = ['iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'jti'] as const;
const RESERVED_CLAIM_SET: ReadonlySet<string> = new Set(RESERVED_CLAIMS);

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

export type TokenErrorReason =
  | 'malformed'
  | 'unsupported_algorithm'
  | 'unknown_key'
  | 'bad_signature'
  | 'expired'
  | 'not_yet_valid'
  | 'wrong_audience'
  | 'wrong_issuer';

const TOKEN_ERROR_MESSAGES: Record<TokenErrorReason, string> = {
  malformed: 'token is malformed',
  unsupported_algorithm: 'token algorithm is not supported',
  unknown_key: 'token was signed by an unknown key',
  bad_signature: 'token signature is invalid',
  expired: 'token has expired',
  not_yet_valid: 'token is not valid yet',
  wrong_audience: 'token audience is not accepted here',
  wrong_issuer: 'token issuer is not trusted',
};

/** The only error a token verifier throws for a rejected token. The message never contains the token. */
export class TokenError extends Error {
  readonly reason: TokenErrorReason;

  constructor(reason: TokenErrorReason) {
    super(TOKEN_ERROR_MESSAGES[reason]);
    this.name = 'TokenError';
    this.reason = reason;
  }
}

/**
 * The JWKS could not be obtained (network failure, non-200 status, invalid document). This is an
 * infrastructure failure, not a verdict on the token: callers should answer 503, not 401.
 */
export class JwksUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JwksUnavailableError';
  }
}

// ---------------------------------------------------------------------------------------------------------
// Keys

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

function loadPrivateKey(pem: string): KeyObject {
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
  const publicJwk = toPublicJwk(coordinatesOf(privateKey));
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { kid: publicJwk.kid, privateKeyPem, publicJwk };
}

/** The public JWK of a P-256 private key PEM; `kid` defaults to the RFC 7638 thumbprint. */
export function publicJwkFromPrivateKeyPem(pem: string, kid?: string): PublicJwk {
  return toPublicJwk(coordinatesOf(loadPrivateKey(pem)), kid);
}

function isPublicJwk(value: unknown): value is PublicJwk {
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

// ---------------------------------------------------------------------------------------------------------
// Issuing

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
  const jwks = createJwksDocument([...loaded].map(([kid, key]) => toPublicJwk(coordinatesOf(key), kid)));

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

// ---------------------------------------------------------------------------------------------------------
// Verifying

export type GetJwks = (opts: { forceRefresh: boolean }) => Promise<JwksDocument>;

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

// ---------------------------------------------------------------------------------------------------------
// JWKS sources

/** A JWKS source for keys held in-process (the hub verifying its own tokens, tests). */
export function createStaticJwks(doc: JwksDocument): GetJwks {
  const copy = createJwksDocument(doc.keys);
  return () => Promise.resolve(copy);
}

export interface RemoteJwksOptions {
  url: string;
  fetch?: typeof fetch;
  /** How long a fetched document is used without refetching; default 300 000 ms. */
  cacheTtlMs?: number;
  /** Minimum time between two fetches triggered by forced refreshes or failures; default 10 000 ms. */
  minRefreshIntervalMs?: number;
  /**
   * After the cache expires, how long the last good document may still be served when a refetch fails;
   * default 3 600 000 ms. 0 disables (a failed refetch then throws `JwksUnavailableError`).
   */
  staleIfErrorMs?: number;
  /** Per-request timeout; default 5 000 ms. */
  timeoutMs?: number;
  /** Clock in milliseconds; defaults to `Date.now`. */
  now?: () => number;
}

/**
 * A cached `getJwks` over HTTP.
 *
 * - A fresh cached document is returned without a request; concurrent callers share one request.
 * - `forceRefresh` (an unknown kid) refetches, but at most once per `minRefreshIntervalMs`, so tokens
 *   with random kids cannot turn into a request flood against the hub.
 * - Failures are remembered for `minRefreshIntervalMs` as well. Within `staleIfErrorMs` after expiry the
 *   last good document keeps being served; otherwise `JwksUnavailableError` is thrown.
 * - Keys that are not ES256 P-256 signing keys are ignored.
 */
export function createRemoteJwks(options: RemoteJwksOptions): GetJwks {
  const fetchImpl = options.fetch ?? fetch;
  const cacheTtlMs = options.cacheTtlMs ?? 300_000;
  const minRefreshIntervalMs = options.minRefreshIntervalMs ?? 10_000;
  const staleIfErrorMs = options.staleIfErrorMs ?? 3_600_000;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const now = options.now ?? Date.now;
  const url = new URL(options.url).toString();

  let cached: { doc: JwksDocument; fetchedAt: number } | null = null;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;
  let lastError: JwksUnavailableError | null = null;
  let inflight: Promise<JwksDocument> | null = null;

  async function download(): Promise<JwksDocument> {
    let response: Response;
    try {
      response = await fetchImpl(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new JwksUnavailableError('JWKS request failed', { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new JwksUnavailableError(`JWKS request returned HTTP ${response.status}`);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new JwksUnavailableError('JWKS response is not JSON', { cause: error });
    }
    const keys = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) {
      throw new JwksUnavailableError('JWKS response has no keys array');
    }
    const usable = keys.filter(isPublicJwk);
    const unique = usable.filter(
      (key, index) => usable.findIndex((other) => other.kid === key.kid) === index,
    );
    return createJwksDocument(unique);
  }

  function refresh(): Promise<JwksDocument> {
    lastAttemptAt = now();
    inflight = download()
      .then(
        (doc) => {
          cached = { doc, fetchedAt: now() };
          lastError = null;
          return doc;
        },
        (error: unknown) => {
          lastError =
            error instanceof JwksUnavailableError
              ? error
              : new JwksUnavailableError('JWKS request failed', { cause: error });
          return fallback();
        },
      )
      .finally(() => {
        inflight = null;
      });
    return inflight;
  }

  /** The cached document if it is still usable after a failure, else the failure. */
  function fallback(): JwksDocument {
    if (cached && now() - cached.fetchedAt < cacheTtlMs + staleIfErrorMs) {
      return cached.doc;
    }
    throw lastError ?? new JwksUnavailableError('JWKS unavailable');
  }

  return async ({ forceRefresh }) => {
    if (inflight) {
      return inflight;
    }
    const t = now();
    const fresh = cached !== null && t - cached.fetchedAt < cacheTtlMs;
    if (cached && fresh && !forceRefresh) {
      return cached.doc;
    }
    if (t - lastAttemptAt < minRefreshIntervalMs) {
      // A refetch happened recently: serve what we have (for a forced refresh the unknown kid stays
      // unknown), or repeat the recent failure instead of hammering the hub.
      if (cached && (fresh || lastError === null)) {
        return cached.doc;
      }
      return fallback();
    }
    return refresh();
  };
}
