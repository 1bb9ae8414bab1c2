/**
 * Receiving signed deliveries (Standard Webhooks scheme, like Svix): HMAC-SHA256 over
 * `{delivery_id}.{timestamp}.{exact body}`, base64 with a `v1,` prefix, one signature per active secret
 * separated by a space while a secret is rotated. Headers: `X-Svc-Delivery-ID` / `X-Svc-Timestamp` /
 * `X-Svc-Signature`, or the same values as `webhook-id` / `webhook-timestamp` / `webhook-signature`. That format
 * (secrets, signed content, signature list, header families) is generated from the platform's own definition
 * (`generated/wire/standard-webhooks.ts`), so this verifier and the platform's signer cannot drift apart.
 *
 * Web Crypto only (no Node.js modules): runs in Node.js 20+, Deno, Bun and edge runtimes. Signing secrets
 * belong on your server: never ship them to a browser.
 */
import { ArgumentError, SvcError } from './errors.js';
import {
  assertSignable,
  DELIVERY_ID_PATTERN,
  formatSignatures,
  parseSignatures,
  readSignedHeaders,
  signedContentPrefix,
  signingKeys,
  TIMESTAMP_PATTERN,
} from './generated/wire/standard-webhooks.js';
import type { HeaderSource } from './generated/wire/standard-webhooks.js';
import type { components } from './generated/workflow.js';
import { constantTimeEqual, fromBase64, hmacSha256, toBase64, utf8 } from './web-crypto.js';

export type { DeliveryEventBody, DeliveryEventType } from './types.js';

type Schemas = components['schemas'];
type EventData = Schemas['DeliveryEventBody']['data'];

/** Every `type` a receiver can get: generated from the contract (`WebhookEventType`). */
export type WebhookEventType = Schemas['WebhookEventType'];

/**
 * The body of one event type as the contract documents it: `data` describes the invocation concerned (its
 * optional `failure` is set in `invocation.failed`), and is sure to carry `delivery` in
 * `delivery.attempts_exhausted` and `subscription` in `delivery_subscription.disabled`; the test event has a
 * body of its own.
 */
export type WebhookEventOf<T extends WebhookEventType> = T extends 'delivery_subscription.test'
  ? Schemas['DeliverySubscriptionTestEventBody']
  : {
      type: T;
      timestamp: string;
      data: EventData &
        (T extends 'delivery.attempts_exhausted'
          ? { delivery: NonNullable<EventData['delivery']> }
          : T extends 'delivery_subscription.disabled'
            ? { subscription: NonNullable<EventData['subscription']> }
            : unknown);
    };

/**
 * Every event a receiver can get, told apart by `type` (a `switch (event.type)` narrows `data`). New types may
 * be added to the contract: handle the ones you know and answer 2xx to the others.
 */
export type WebhookEvent = { [T in WebhookEventType]: WebhookEventOf<T> }[WebhookEventType];

export const DEFAULT_TOLERANCE_SECONDS = 300;

/** A fetch `Headers`, a plain object with keys in any case, or Node's `IncomingHttpHeaders`. */
export type WebhookHeaders = HeaderSource;

export type WebhookVerificationCode =
  | 'headers_missing'
  | 'timestamp_invalid'
  | 'timestamp_out_of_tolerance'
  | 'signature_invalid'
  | 'body_invalid_json';

/** A delivery that must not be trusted: answer it with a non-2xx status. Messages never contain secrets. */
export class WebhookVerificationError extends SvcError {
  override readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.code = code;
  }
}

export interface WebhookOptions {
  /** Largest accepted distance between the delivery timestamp and now, either way (default 300 s). */
  toleranceSeconds?: number;
  /**
   * Remember verified delivery ids and flag repeats as `duplicate` (default true). The memory is this process's
   * only, for `dedupeTtlMs` (24 h), and is forgotten on restart: a receiver with several replicas should
   * deduplicate in its database instead (a unique key on `id`, written with the work the delivery triggers).
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
  /** The verified, parsed body, typed by its `type`. */
  event: WebhookEvent;
  /** True when this id was already verified by this `Webhook` (within the dedupe window): skip the work. */
  duplicate: boolean;
}

function toBytes(body: string | Uint8Array | ArrayBuffer): Uint8Array<ArrayBuffer> {
  if (typeof body === 'string') return utf8(body);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (body instanceof Uint8Array) return new Uint8Array(body);
  throw new ArgumentError(
    'argument_invalid',
    'body',
    'the delivery body must be the raw bytes as received: a string, Uint8Array (Buffer) or ArrayBuffer',
  );
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
 * if (!delivery.duplicate && delivery.event.type === 'delivery.attempts_exhausted') {
 *   console.warn('undelivered', delivery.event.data.delivery.delivery_id);
 * }
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
    try {
      this.keys = signingKeys(secret, fromBase64);
    } catch (error) {
      // No secret, or not a whsec_ one: refused here, with the reason, before any delivery is judged.
      throw new ArgumentError(
        'argument_invalid',
        'secret',
        error instanceof Error ? error.message : 'a signing secret (whsec_…) is required',
      );
    }
    this.toleranceSeconds = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
    if (!(this.toleranceSeconds >= 0))
      throw new ArgumentError(
        'argument_invalid',
        'toleranceSeconds',
        'toleranceSeconds must be a non-negative number',
      );
    this.now = options.now ?? Date.now;
    this.seen = options.dedupe === false ? undefined : new Map();
    this.ttlMs = options.dedupeTtlMs ?? 24 * 60 * 60 * 1000;
    this.maxEntries = options.dedupeMaxEntries ?? 100_000;
    if (!(this.ttlMs > 0))
      throw new ArgumentError('argument_invalid', 'dedupeTtlMs', 'dedupeTtlMs must be a positive number');
    if (!Number.isSafeInteger(this.maxEntries) || this.maxEntries < 1)
      throw new ArgumentError(
        'argument_invalid',
        'dedupeMaxEntries',
        'dedupeMaxEntries must be a positive whole number',
      );
  }

  /** The `v1,…` signature header value of a delivery (one per secret), e.g. to test a receiver. */
  async sign(id: string, timestamp: number, body: string | Uint8Array | ArrayBuffer): Promise<string> {
    assertSignable(id, timestamp);
    const content = concat(utf8(signedContentPrefix(id, timestamp)), toBytes(body));
    return formatSignatures(
      await Promise.all(this.keys.map(async (key) => toBase64(await hmacSha256(key, content)))),
    );
  }

  /**
   * Verifies a delivery from the EXACT raw body (a re-serialised parse will not verify) and its headers:
   * either header family, timestamp within tolerance, one `v1` signature matching one secret (constant-time),
   * JSON body. Returns the typed event and whether its id was seen before; otherwise throws
   * {@link WebhookVerificationError}.
   */
  async verify(body: string | Uint8Array | ArrayBuffer, headers: WebhookHeaders): Promise<WebhookDelivery> {
    const bytes = toBytes(body);
    const received = readSignedHeaders(headers);
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
    const candidates = parseSignatures(received.signature);
    const content = concat(utf8(signedContentPrefix(received.id, timestamp)), bytes);
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
    let event: WebhookEvent;
    try {
      event = JSON.parse(new TextDecoder().decode(bytes)) as WebhookEvent;
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
