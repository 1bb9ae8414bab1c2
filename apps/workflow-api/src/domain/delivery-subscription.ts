import { AppError } from '@svc/service-kit';
import type { DeliveryEventType } from './delivery-event';
import { checkDeliveryUrl } from './url-guard';

/** Rotation grace when the request does not say: the previous secret keeps signing for 24 h. */
export const DEFAULT_ROTATION_GRACE_SECONDS = 86_400;
/** At most this many deliveries are replayed by one call. */
export const MAX_REPLAY = 10_000;
export const DEFAULT_DELIVERY_PAGE = 50;
export const MAX_DELIVERY_PAGE = 200;

/** Checks the URL like the sender will (scheme, credentials, every resolved address); the normalised URL. */
export async function checkedSubscriptionUrl(raw: string, allowLoopbackHttp: boolean): Promise<URL> {
  const { url } = await checkDeliveryUrl(raw, { allowLoopbackHttp });
  return url;
}

export const uniqueEvents = (events: DeliveryEventType[]): DeliveryEventType[] => [...new Set(events)];

/** An empty description clears it. */
export const descriptionOf = (description: string | undefined): string | null =>
  description === undefined || description.trim() === '' ? null : description;

export const subscriptionDisabled = () =>
  new AppError({
    status: 409,
    code: 'subscription_disabled',
    detail: 'The delivery subscription is disabled or deleted; enable it before sending again.',
  });

/** A page position in the deliveries list: the last row's creation time and id. */
export interface DeliveryCursor {
  createdAt: Date;
  id: string;
}

export function encodeDeliveryCursor(row: DeliveryCursor): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id]), 'utf8').toString('base64url');
}

/** Reads a cursor this API returned; anything else is 400 `cursor_invalid`. */
export function decodeDeliveryCursor(cursor: string): DeliveryCursor {
  const invalid = () =>
    new AppError({
      status: 400,
      code: 'cursor_invalid',
      detail: 'The cursor is not one this API returned; start again without it.',
    });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid();
  const [at, id] = parsed as unknown[];
  if (typeof at !== 'string' || typeof id !== 'string' || id === '') throw invalid();
  const createdAt = new Date(at);
  if (Number.isNaN(createdAt.getTime())) throw invalid();
  return { createdAt, id };
}
