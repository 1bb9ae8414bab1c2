import type { SecretBox } from '@svc/service-kit';

/** How deliveries are signed, checked and retried; from the environment (env.ts), shortened in tests. */
export interface DeliverySettings {
  /** Seals and opens signing secrets; null when WORKFLOW_ENCRYPTION_KEYS is not configured. */
  secrets: SecretBox | null;
  /** Development only: loopback endpoints (http or https) are allowed. */
  allowLoopbackHttp: boolean;
  /** Delay before retry n+1 (attempt n+2); its length + 1 attempts in all. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** Extra trusted CA (PEM) for endpoints with a private certificate. */
  ca?: string;
}

/** Svix-like: the first attempt at once, then retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. */
export const DEFAULT_RETRY_SCHEDULE_MS = [5, 300, 1800, 7200, 18000, 36000, 36000].map((s) => s * 1000);

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  secrets: null,
  allowLoopbackHttp: false,
  retryScheduleMs: DEFAULT_RETRY_SCHEDULE_MS,
  timeoutMs: 15_000,
};

/** A subscription whose deliveries exhaust every retry this many times in a row is disabled. */
export const EXHAUSTIONS_BEFORE_DISABLE = 5;

/** An ordered subscription's next-in-line delivery looks again this soon while its predecessor is in flight. */
export const ORDERED_SHORT_WAIT_MS = 250;
/** The others look again at the latest after this long (each delivery that ends wakes the next in line). */
export const ORDERED_LONG_WAIT_MS = 5_000;
