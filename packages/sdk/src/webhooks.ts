/**
 * Receiving signed deliveries (Standard Webhooks scheme, like Svix): HMAC-SHA256 over
 * `{delivery_id}.{timestamp}.{exact body}`, base64 with a `v1,` prefix, one signature per active secret
 * separated by a space while a secret is rotated. Headers: `X-Svc-Delivery-ID` / `X-Svc-Timestamp` /
 * `X-Svc-Signature`, or the same values as `webhook-id` / `webhook-timestamp` / `webhook-signature`.
 *
 * Web Crypto only (no Node.js modules): runs in Node.js 20+, Deno, Bun and edge runtimes. Signing secrets
 * belong on your server: never ship them to a browser.
 */
import { SvcError } from './errors.js';
import type { DeliveryEventBody } from './types.js';
import { constantTimeEqual, fromBase64, hmacSha256, toBase64, utf8 } from './web-crypto.js';

export type { DeliveryEventBody, DeliveryEventType } from './types.js';

const SECRET_PREFIX = 'whsec_';
const SECRET_MIN_BYTES = 24;
const SECRET_MAX_BYTES = 64;
const BASE64_PATTERN = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DELIVERY_ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]{1,255}$/;
const TIMESTAMP_PATTERN = /^\d{1,15}$/;
export const DEFAULT_TOLERANCE_SECONDS = 300;

const HEADER_FAMILIES = [
  { id: 'x-svc-delivery-id', timestamp: 'x-svc-timestamp', signature: 'x-svc-signature' },
  { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' },
] as const;

/** A fetch `Headers`, a plain object with keys in any case, or Node's `IncomingHttpHeaders`. */
export type WebhookHeaders =
  { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export type WebhookVerificationCode =
  | 'headers_missing'
  | 'timestamp_invalid'
  | 'timestamp_out_of_tolerance'
  | 'signature_invalid'
  | 'body_invalid_json';

/** A delivery that must not be trusted: answer it with a non-2xx status. Messages never contain secrets. */
export class WebhookVerificationError extends SvcError {
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.code = code;
  }
}

export interface WebhookOptions {
  /** Largest accepted distance between the delivery timestamp and now, either way (default 300 s). */
  toleranceSeconds?: number;
  /**
   * Remember verified delivery ids (in this process, for `dedupeTtlMs`) and flag repeats as `duplicate`
   * (default true). Several replicas should deduplicate in their database on `id` instead.
   */
  dedupe?: boolean;
  dedupeTtlMs?: number;
  dedupeMaxEntries?: number;
  /** The current time in milliseconds (default `Date.now`). */
  now?: () => number;
}

export interface WebhookDelivery {
  /** The delivery id: the key to deduplicate on (a redelivery or replay keeps it). */
  id: string;
  /** Unix time in seconds from the timestamp header. */
  timestamp: number;
  /** The verified, parsed body. */
  event: DeliveryEventBody;
  /** True when this id was already verified by this `Webhook` (within the dedupe window): skip the work. */
  duplicate: boolean;
}

function decodeSecret(value: unknown, label: string): Uint8Array<ArrayBuffer> {
  if (typeof value !== 'string' || !value.startsWith(SECRET_PREFIX)) {
    throw new TypeError(`${label} is malformed: expected a string starting with "${SECRET_PREFIX}"`);
  }
  const encoded = value.slice(SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64_PATTERN.test(encoded)) {
    throw new TypeError(`${label} is malformed: the part after "${SECRET_PREFIX}" must be padded base64`);
  }
  const key = fromBase64(encoded);
  if (key.length < SECRET_MIN_BYTES || key.length > SECRET_MAX_BYTES) {
    throw new TypeError(
      `${label} is malformed: it must decode to ${SECRET_MIN_BYTES}–${SECRET_MAX_BYTES} bytes`,
    );
  }
  return key;
}

function headerReader(headers: WebhookHeaders): (name: string) => string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    const lookup = headers as { get(name: string): string | null };
    return (name) => lookup.get(name) ?? undefined;
  }
  const byName = new Map<string, string>();
  for (const [key, value] of Object.entries(
    headers as Record<string, string | readonly string[] | undefined>,
  )) {
    if (value === undefined) continue;
    const joined = typeof value === 'string' ? value : value.join(', ');
    const name = key.toLowerCase();
    const previous = byName.get(name);
    byName.set(name, previous === undefined ? joined : `${previous}, ${joined}`);
  }
  return (name) => byName.get(name);
}

function toBytes(body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return utf8(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof Uint8Array) return new Uint8Array(body);
  throw new TypeError('the delivery body must be a string, Uint8Array (Buffer) or ArrayBuffer');
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/**
 * Verifies deliveries of one subscription. Pass the old and the new secret while rotating.
 *
 * ```ts
 * const webhook = new Webhook(process.env.SVC_WEBHOOK_SECRET!);
 * const delivery = await webhook.verify(rawBody, request.headers); // throws WebhookVerificationError
 * if (!delivery.duplicate) handle(delivery.event);
 * ```
 */
export class Webhook {
  private readonly keys: Uint8Array<ArrayBuffer>[];
  private readonly toleranceSeconds: number;
  private readonly now: () => number;
  private readonly seen: Map<string, number> | undefined;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(secret: string | readonly string[], options: WebhookOptions = {}) {
    const secrets: readonly unknown[] = typeof secret === 'string' ? [secret] : secret;
    if (!Array.isArray(secrets) || secrets.length === 0)
      throw new TypeError('at least one signing secret is required');
    this.keys = secrets.map((value, index) =>
      decodeSecret(value, secrets.length === 1 ? 'signing secret' : `signing secret #${index + 1}`),
    );
    this.toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (!(this.toleranceSeconds >= 0)) throw new TypeError('toleranceSeconds must be a non-negative number');
    this.now = options.now ?? Date.now;
    this.seen = options.dedupe === false ? undefined : new Map();
    this.ttlMs = options.dedupeTtlMs ?? 24 * 60 * 60 * 1000;
    this.maxEntries = options.dedupeMaxEntries ?? 100_000;
  }

  /** The `v1,…` signature header value of a delivery (one per secret), e.g. to test a receiver. */
  async sign(id: string, timestamp: number, body: string | Uint8Array | ArrayBuffer): Promise<string> {
    if (!DELIVERY_ID_PATTERN.test(id))
      throw new TypeError('id must be 1–255 printable ASCII without spaces or dots');
    if (!Number.isSafeInteger(timestamp) || timestamp < 0)
      throw new TypeError('timestamp must be whole seconds');
    const content = concat(utf8(`${id}.${timestamp}.`), toBytes(body));
    const signatures = await Promise.all(
      this.keys.map(async (key) => `v1,${toBase64(await hmacSha256(key, content))}`),
    );
    return signatures.join(' ');
  }

  /**
   * Verifies a delivery from the EXACT raw body (a re-serialised parse will not verify) and its headers:
   * either header family, timestamp within tolerance, one `v1` signature matching one secret (constant-time),
   * JSON body. Returns the typed event and whether its id was seen before; otherwise throws
   * {@link WebhookVerificationError}.
   */
  async verify(body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders): Promise<WebhookDelivery> {
    const bytes = toBytes(body);
    const read = headerReader(headers);
    let received: { id: string; timestamp: string; signature: string } | undefined;
    for (const family of HEADER_FAMILIES) {
      const id = read(family.id)?.trim();
      const timestamp = read(family.timestamp)?.trim();
      const signature = read(family.signature)?.trim();
      if (id && timestamp && signature) {
        received = { id, timestamp, signature };
        break;
      }
    }
    if (!received || !DELIVERY_ID_PATTERN.test(received.id)) {
      throw new WebhookVerificationError(
        'headers_missing',
        'delivery headers are missing: expected X-Svc-Delivery-ID, X-Svc-Timestamp and X-Svc-Signature ' +
          '(or webhook-id, webhook-timestamp and webhook-signature)',
      );
    }
    if (!TIMESTAMP_PATTERN.test(received.timestamp)) {
      throw new WebhookVerificationError(
        'timestamp_invalid',
        'the delivery timestamp is not whole Unix seconds',
      );
    }
    const timestamp = Number(received.timestamp);
    if (Math.abs(Math.floor(this.now() / 1000) - timestamp) > this.toleranceSeconds) {
      throw new WebhookVerificationError(
        'timestamp_out_of_tolerance',
        `the delivery timestamp is more than ${this.toleranceSeconds} seconds away from the current time`,
      );
    }
    const candidates = received.signature
      .split(' ')
      .filter((entry) => entry.startsWith('v1,'))
      .map((entry) => entry.slice(3));
    const content = concat(utf8(`${received.id}.${timestamp}.`), bytes);
    let matched = false;
    for (const key of this.keys) {
      const expected = toBase64(await hmacSha256(key, content));
      for (const candidate of candidates) if (constantTimeEqual(expected, candidate)) matched = true;
    }
    if (!matched) {
      throw new WebhookVerificationError(
        'signature_invalid',
        'no delivery signature matches: check the signing secret and pass the exact raw request body',
      );
    }
    let event: DeliveryEventBody;
    try {
      event = JSON.parse(new TextDecoder().decode(bytes)) as DeliveryEventBody;
    } catch {
      throw new WebhookVerificationError('body_invalid_json', 'the delivery body is not valid JSON');
    }
    return { id: received.id, timestamp, event, duplicate: this.remember(received.id) };
  }

  /**
   * Forgets a delivery id, so a redelivery of it is processed again: call it when handling a verified
   * delivery failed and you answer non-2xx.
   */
  forget(id: string): void {
    this.seen?.delete(id);
  }

  private remember(id: string): boolean {
    if (!this.seen) return false;
    const at = this.now();
    for (const [key, time] of this.seen) {
      if (at - time < this.ttlMs) break;
      this.seen.delete(key);
    }
    if (this.seen.has(id)) return true;
    this.seen.set(id, at);
    while (this.seen.size > this.maxEntries) {
      const oldest = this.seen.keys().next();
      if (oldest.done) break;
      this.seen.delete(oldest.value);
    }
    return false;
  }
}
