/**
 * The format of a signed delivery (Standard Webhooks scheme), shared by the platform's signer (`node:crypto`,
 * in `@svc/contracts`) and the SDK's verifier (Web Crypto), whose generator copies this file into the SDK: only
 * the HMAC itself is each side's own. The platform signs with HMAC-SHA256 over
 * `{delivery_id}.{timestamp}.{exact body}`; the signature is base64 with a `v1,` prefix, and during secret
 * rotation the header carries one signature per active secret, separated by a single space. The same values
 * travel under two header families: `X-Svc-Delivery-ID` / `X-Svc-Timestamp` / `X-Svc-Signature` and
 * `webhook-id` / `webhook-timestamp` / `webhook-signature`, so any Standard Webhooks library verifies them too.
 * Imports nothing, like every wire module, so the copy compiles on its own in any runtime.
 */

export const SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: symmetric secrets hold at least 24 and at most 64 random bytes. */
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 64;
/** Canonical padded base64, as `Buffer#toString('base64')` and `btoa` write it. */
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** Printable ASCII without spaces or full stops: a `.` would make the signed content ambiguous. */
export const DELIVERY_ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;
/** The timestamp header: whole seconds since the Unix epoch. */
export const TIMESTAMP_PATTERN = /^\d{1,15}$/;
export const SIGNATURE_VERSION = 'v1';

/** Both header families, named as they are sent; a receiver accepts either one, in any letter case. */
export const HEADER_FAMILIES = [
  { id: 'X-Svc-Delivery-ID', timestamp: 'X-Svc-Timestamp', signature: 'X-Svc-Signature' },
  { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' },
] as const;

/** One `whsec_…` secret, or several while a secret is being rotated (every one is used). */
export type SigningSecrets = string | readonly string[];

/**
 * Turns one or several `whsec_…` secrets into HMAC keys, decoding the base64 part with the caller's decoder. A
 * malformed secret is a configuration error, so it throws a `TypeError` that names the secret's position in the
 * list but never its value.
 */
export function signingKeys<Key extends { length: number }>(
  secret: SigningSecrets,
  decodeBase64: (encoded: string) => Key,
): Key[] {
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
    const key = decodeBase64(encoded);
    if (key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) {
      throw new TypeError(
        `${label} is malformed: it must decode to ${SECRET_MIN_BYTES}–${SECRET_MAX_BYTES} bytes, not ${key.length}`,
      );
    }
    return key;
  });
}

/** Refuses (with a `TypeError`) a delivery id or timestamp that cannot be signed unambiguously. */
export function assertSignable(deliveryId: unknown, timestamp: unknown): void {
  if (typeof deliveryId !== 'string' || !DELIVERY_ID_PATTERN.test(deliveryId)) {
    throw new TypeError(
      'the delivery id must be 1–255 printable ASCII characters without spaces or full stops',
    );
  }
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new TypeError('the timestamp must be a non-negative whole number of seconds since the Unix epoch');
  }
}

/** What a signature covers before the body's exact bytes: `{delivery_id}.{timestamp}.`. */
export function signedContentPrefix(deliveryId: string, timestamp: number): string {
  return `${deliveryId}.${timestamp}.`;
}

/** The signature header value: `v1,<base64>` per signature (one per secret), joined by a single space. */
export function formatSignatures(signatures: readonly string[]): string {
  return signatures.map((signature) => `${SIGNATURE_VERSION},${signature}`).join(' ');
}

/** The base64 signatures of a signature header's `v1` entries; entries of other versions are left out. */
export function parseSignatures(header: string): string[] {
  const prefix = `${SIGNATURE_VERSION},`;
  return header
    .split(' ')
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length));
}

/** A fetch `Headers` object, a plain object with keys in any case, or Node's `IncomingHttpHeaders`. */
export type HeaderSource =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

/** Reads headers case-insensitively; repeated values are joined with ", " as HTTP does. */
export function headerReader(headers: HeaderSource): (name: string) => string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const lookup = headers as { get(name: string): string | null };
    return (name) => lookup.get(name) ?? undefined;
  }
  const byLowerName = new Map<string, string>();
  for (const [key, value] of Object.entries(
    headers as Readonly<Record<string, string | readonly string[] | undefined>>,
  )) {
    if (value === undefined) continue;
    const joined = typeof value === 'string' ? value : value.join(', ');
    const name = key.toLowerCase();
    const previous = byLowerName.get(name);
    byLowerName.set(name, previous === undefined ? joined : `${previous}, ${joined}`);
  }
  return (name) => byLowerName.get(name.toLowerCase());
}

/** The id, timestamp and signature of the first header family present in full (trimmed), if any. */
export function readSignedHeaders(
  headers: HeaderSource,
): { id: string; timestamp: string; signature: string } | undefined {
  const read = headerReader(headers);
  for (const family of HEADER_FAMILIES) {
    const id = read(family.id)?.trim();
    const timestamp = read(family.timestamp)?.trim();
    const signature = read(family.signature)?.trim();
    if (id && timestamp && signature) return { id, timestamp, signature };
  }
  return undefined;
}
