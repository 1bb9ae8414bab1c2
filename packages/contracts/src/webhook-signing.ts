/**
 * Signing deliveries (the platform's side of the Standard Webhooks scheme in `wire/standard-webhooks.ts`):
 * subscription secrets, the signature of one attempt and its headers. Synchronous `node:crypto`, as the
 * delivery worker signs every attempt; receivers verify with the SDK's `Webhook`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import {
  assertSignable,
  formatSignatures,
  HEADER_FAMILIES,
  SECRET_PREFIX,
  signedContentPrefix,
  signingKeys,
} from './wire/standard-webhooks';
import type { SigningSecrets } from './wire/standard-webhooks';

export type { SigningSecrets } from './wire/standard-webhooks';

const SECRET_RANDOM_BYTES = 32;

/** Every header of a delivery (a type alias, not an interface, so it can be passed where headers are read). */
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

/** A new subscription signing secret: `whsec_` followed by base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_RANDOM_BYTES).toString('base64')}`;
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
  const keys = signingKeys(options.secret, (encoded) => Buffer.from(encoded, 'base64'));
  assertSignable(options.deliveryId, options.timestamp);
  const prefix = signedContentPrefix(options.deliveryId, options.timestamp);
  const body = bodyBytes(options.body);
  return formatSignatures(
    keys.map((key) => createHmac('sha256', key).update(prefix, 'utf8').update(body).digest('base64')),
  );
}

/** Every header of a delivery: the identity, timestamp and signature under both families, and the JSON type. */
export function deliveryHeaders(options: SignDeliveryOptions): DeliveryHeaders {
  const signature = signDelivery(options);
  const timestamp = String(options.timestamp);
  const [svc, standard] = HEADER_FAMILIES;
  return {
    [svc.id]: options.deliveryId,
    [svc.timestamp]: timestamp,
    [svc.signature]: signature,
    [standard.id]: options.deliveryId,
    [standard.timestamp]: timestamp,
    [standard.signature]: signature,
    'content-type': 'application/json',
  };
}
