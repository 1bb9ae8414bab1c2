/**
 * Signed delivery (Standard Webhooks scheme). The platform signs every delivery with HMAC-SHA256 over
 * `{delivery_id}.{timestamp}.{exact body}`; the signature is base64 with a `v1,` prefix, and during secret
 * rotation the header carries one signature per active secret, separated by a single space. The same values
 * travel under two header families: `X-Svc-Delivery-ID` / `X-Svc-Timestamp` / `X-Svc-Signature` and
 * `webhook-id` / `webhook-timestamp` / `webhook-signature`, so any Standard Webhooks library verifies them too.
 *
 * Receivers call {@link verifyDelivery} with the EXACT raw request body (not a re-serialised parse of it), then
 * deduplicate on the returned delivery id (see {@link createDeliveryDeduper}).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const SECRET_RANDOM_BYTES = 32;
/** Standard Webhooks: symmetric secrets hold at least 24 and at most 64 random bytes. */
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 64;
const SIGNATURE_VERSION = 'v1';
/** Canonical padded base64, as produced by Buffer#toString('base64'). */
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Printable ASCII without spaces or full stops: a `.` would make the signed content ambiguous. */
const DELIVERY_ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;
const TIMESTAMP_PATTERN = /^\d{1,15}$/;

export const DEFAULT_DELIVERY_TOLERANCE_SECONDS = 300;

/** Both header families; verification accepts either one. */
const HEADER_FAMILIES = [
  { id: 'x-svc-delivery-id', timestamp: 'x-svc-timestamp', signature: 'x-svc-signature' },
  { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' },
] as const;

/** One `whsec_…` secret, or several while a secret is being rotated (every one is used). */
export type SigningSecrets = string | readonly string[];

/** A fetch `Headers` object (or anything with the same `get`). */
export interface HeaderLookup {
  get(name: string): string | null;
}

/** A fetch `Headers` object, a plain object with keys in any case, or node's `IncomingHttpHeaders`. */
export type DeliveryHeaderSource =
  HeaderLookup | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A type alias (not an interface) so it can be passed straight back to {@link verifyDelivery}. */
export type DeliveryHeaders = {
  'X-Svc-Delivery-ID': string;
  'X-Svc-Timestamp': string;
  'X-Svc-Signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'content-type': 'application/json';
};

export interface SignDeliveryOptions {
  secret: SigningSecrets;
  deliveryId: string;
  /** Unix time in whole seconds of this delivery attempt. */
  timestamp: number;
  /** The exact bytes that are sent as the request body. */
  body: string | Buffer;
}

export interface VerifyDeliveryOptions {
  /** The subscription's `whsec_…` secret; during rotation, pass the old and the new one. */
  secret: SigningSecrets;
  headers: DeliveryHeaderSource;
  /** The EXACT raw request body as received; a parsed and re-serialised body will not verify. */
  body: string | Buffer;
  /** Largest accepted distance between the delivery timestamp and now, in either direction. Default 300. */
  toleranceSeconds?: number;
  /** The current time; defaults to the system clock. */
  now?: Date;
}

export interface VerifiedDelivery {
  deliveryId: string;
  /** Unix time in seconds taken from the timestamp header. */
  timestamp: number;
  /** The parsed JSON body. */
  event: unknown;
}

export type DeliveryVerificationCode =
  | 'headers_missing'
  | 'timestamp_invalid'
  | 'timestamp_out_of_tolerance'
  | 'signature_invalid'
  | 'body_invalid_json';

/** A delivery that must not be trusted; answer it with a non-2xx status. Messages never contain secrets. */
export class DeliveryVerificationError extends Error {
  readonly code: DeliveryVerificationCode;

  constructor(code: DeliveryVerificationCode, message: string) {
    super(message);
    this.name = 'DeliveryVerificationError';
    this.code = code;
  }
}

/** A new subscription signing secret: `whsec_` followed by base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_RANDOM_BYTES).toString('base64')}`;
}

/**
 * Turns one or several `whsec_…` secrets into HMAC keys. A malformed secret is a configuration error, so it
 * throws a `TypeError` that names the secret's position in the list but never its value.
 */
function decodeSecrets(secret: SigningSecrets): Buffer[] {
  const secrets: readonly unknown[] = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new TypeError('at least one signing secret is required');
  }
  return secrets.map((value, index) => {
    const label = secrets.length === 1 ? 'signing secret' : `signing secret #${index + 1}`;
    if (typeof value !== 'string' || !value.startsWith(SECRET_PREFIX)) {
      throw new TypeError(`${label} is malformed: expected a string starting with "${SECRET_PREFIX}"`);
    }
    const encoded = value.slice(SECRET_PREFIX.length);
    if (encoded.length === 0 || !BASE64_PATTERN.test(encoded)) {
      throw new TypeError(`${label} is malformed: the part after "${SECRET_PREFIX}" must be padded base64`);
    }
    const key = Buffer.from(encoded, 'base64');
    if (key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) {
      throw new TypeError(
        `${label} is malformed: it must decode to ${SECRET_MIN_BYTES}–${SECRET_MAX_BYTES} bytes, not ${key.length}`,
      );
    }
    return key;
  });
}

/** base64(HMAC-SHA256(key, `${deliveryId}.${timestamp}.` + body bytes)). */
function computeSignature(key: Buffer, deliveryId: string, timestamp: number, body: Buffer): string {
  return createHmac('sha256', key)
    .update(`${deliveryId}.${timestamp}.`, 'utf8')
    .update(body)
    .digest('base64');
}

function bodyBytes(body: string | Buffer): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return body;
  throw new TypeError('the delivery body must be a string or a Buffer');
}

/**
 * The signature header value for one delivery attempt: `v1,<base64>` per secret, joined by a single space
 * (several secrets while one is being rotated).
 */
export function signDelivery(options: SignDeliveryOptions): string {
  const keys = decodeSecrets(options.secret);
  if (typeof options.deliveryId !== 'string' || !DELIVERY_ID_PATTERN.test(options.deliveryId)) {
    throw new TypeError('deliveryId must be 1–255 printable ASCII characters without spaces or full stops');
  }
  if (!Number.isSafeInteger(options.timestamp) || options.timestamp < 0) {
    throw new TypeError('timestamp must be a non-negative whole number of seconds since the Unix epoch');
  }
  const body = bodyBytes(options.body);
  return keys
    .map(
      (key) => `${SIGNATURE_VERSION},${computeSignature(key, options.deliveryId, options.timestamp, body)}`,
    )
    .join(' ');
}

/** Every header of a delivery: the identity, timestamp and signature under both families, and the JSON type. */
export function deliveryHeaders(options: SignDeliveryOptions): DeliveryHeaders {
  const signature = signDelivery(options);
  const timestamp = String(options.timestamp);
  return {
    'X-Svc-Delivery-ID': options.deliveryId,
    'X-Svc-Timestamp': timestamp,
    'X-Svc-Signature': signature,
    'webhook-id': options.deliveryId,
    'webhook-timestamp': timestamp,
    'webhook-signature': signature,
    'content-type': 'application/json',
  };
}

function isHeaderLookup(headers: DeliveryHeaderSource): headers is HeaderLookup {
  return typeof (headers as { get?: unknown }).get === 'function';
}

/** Reads headers case-insensitively; repeated values are joined with ", " as HTTP does. */
function headerReader(headers: DeliveryHeaderSource): (name: string) => string | undefined {
  if (isHeaderLookup(headers)) {
    return (name) => headers.get(name) ?? undefined;
  }
  const byLowerName = new Map<string, string>();
  for (const [key, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = typeof value === 'string' ? value : value.join(', ');
    const name = key.toLowerCase();
    const previous = byLowerName.get(name);
    byLowerName.set(name, previous === undefined ? joined : `${previous}, ${joined}`);
  }
  return (name) => byLowerName.get(name);
}

function readDeliveryHeaders(
  headers: DeliveryHeaderSource,
): { deliveryId: string; timestamp: string; signature: string } | undefined {
  const read = headerReader(headers);
  for (const family of HEADER_FAMILIES) {
    const deliveryId = read(family.id)?.trim();
    const timestamp = read(family.timestamp)?.trim();
    const signature = read(family.signature)?.trim();
    if (deliveryId && timestamp && signature) return { deliveryId, timestamp, signature };
  }
  return undefined;
}

/** Constant-time comparison of two ASCII strings (unequal lengths are simply unequal). */
function sameSignature(expected: Buffer, candidate: string): boolean {
  const given = Buffer.from(candidate, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Verifies a received delivery: the headers of either family are present, the timestamp is within
 * `toleranceSeconds` of now (both directions), one `v1,` signature of the header matches one of the given
 * secrets (constant-time comparison), and the body is JSON. Returns the delivery id (to deduplicate on), the
 * timestamp and the parsed event; otherwise throws {@link DeliveryVerificationError}.
 */
export function verifyDelivery(options: VerifyDeliveryOptions): VerifiedDelivery {
  const keys = decodeSecrets(options.secret);
  const body = bodyBytes(options.body);
  const tolerance = options.toleranceSeconds ?? DEFAULT_DELIVERY_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError('toleranceSeconds must be a non-negative number');
  }

  const received = readDeliveryHeaders(options.headers);
  if (!received) {
    throw new DeliveryVerificationError(
      'headers_missing',
      'delivery headers are missing: expected X-Svc-Delivery-ID, X-Svc-Timestamp and X-Svc-Signature ' +
        '(or webhook-id, webhook-timestamp and webhook-signature)',
    );
  }
  if (!DELIVERY_ID_PATTERN.test(received.deliveryId)) {
    throw new DeliveryVerificationError('headers_missing', 'the delivery id header is malformed');
  }
  if (!TIMESTAMP_PATTERN.test(received.timestamp)) {
    throw new DeliveryVerificationError(
      'timestamp_invalid',
      'the delivery timestamp header is not a whole number of seconds since the Unix epoch',
    );
  }
  const timestamp = Number(received.timestamp);
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > tolerance) {
    throw new DeliveryVerificationError(
      'timestamp_out_of_tolerance',
      `the delivery timestamp is more than ${tolerance} seconds away from the current time`,
    );
  }

  const candidates = received.signature
    .split(' ')
    .filter((entry) => entry.startsWith(`${SIGNATURE_VERSION},`))
    .map((entry) => entry.slice(SIGNATURE_VERSION.length + 1));
  let matched = false;
  for (const key of keys) {
    const expected = Buffer.from(computeSignature(key, received.deliveryId, timestamp, body), 'utf8');
    for (const candidate of candidates) {
      // Every pair is compared (no early exit), so timing does not reveal which secret or entry matched.
      if (sameSignature(expected, candidate)) matched = true;
    }
  }
  if (!matched) {
    throw new DeliveryVerificationError(
      'signature_invalid',
      'no delivery signature matches: check the signing secret and pass the exact raw request body',
    );
  }

  let event: unknown;
  try {
    event = JSON.parse(body.toString('utf8'));
  } catch {
    throw new DeliveryVerificationError('body_invalid_json', 'the delivery body is not valid JSON');
  }
  return { deliveryId: received.deliveryId, timestamp, event };
}

export interface DeliveryDeduperOptions {
  /** How long a delivery id is remembered. Default 24 hours. */
  ttlMs?: number;
  /** Most ids remembered; the oldest are forgotten first. Default 100,000. */
  maxEntries?: number;
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  now?: () => number;
}

export interface DeliveryDeduper {
  /** True when this delivery id was already seen within the ttl; otherwise records it and returns false. */
  seen(deliveryId: string): boolean;
}

/**
 * An in-memory, per-process record of delivery ids, so a retried or replayed delivery is processed once.
 * It forgets everything on restart and is not shared between processes: a receiver running several replicas
 * should deduplicate in its database instead (a unique key on the delivery id, inserted in the same
 * transaction as the work the delivery triggers).
 */
export function createDeliveryDeduper(options: DeliveryDeduperOptions = {}): DeliveryDeduper {
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  if (!(ttlMs > 0)) throw new TypeError('ttlMs must be a positive number');
  if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
    throw new TypeError('maxEntries must be a positive whole number');
  }
  // Insertion order is recording order, so the first entries are always the oldest.
  const recordedAt = new Map<string, number>();

  function forgetExpired(at: number): void {
    for (const [id, time] of recordedAt) {
      if (at - time < ttlMs) break;
      recordedAt.delete(id);
    }
  }

  return {
    seen(deliveryId) {
      const at = now();
      forgetExpired(at);
      const previous = recordedAt.get(deliveryId);
      if (previous !== undefined && at - previous < ttlMs) return true;
      recordedAt.delete(deliveryId);
      recordedAt.set(deliveryId, at);
      while (recordedAt.size > maxEntries) {
        const oldest = recordedAt.keys().next();
        if (oldest.done) break;
        recordedAt.delete(oldest.value);
      }
      return false;
    },
  };
}
