import type { Redis } from '@svc/service-kit';

/**
 * Paces each rate-limited subscription's deliveries across every worker: Redis keeps, per subscription, the
 * time its next delivery may start (`<prefix>:delivery-rate:<subscription id>`). Reserving takes the first free
 * slot — now, or the end of the slots already taken — and moves the mark one interval (1000 / rate ms) past it,
 * in one script, so two workers never get the same slot. The caller sends when its slot comes; nothing is
 * dropped. Redis's own clock decides, so the workers' clocks need not agree.
 */
export interface DeliveryRateLimiter {
  /** Reserves the subscription's next slot; the milliseconds until it starts (0: send now). */
  reserve(subscriptionId: string, perSecond: number): Promise<{ waitMs: number; intervalMs: number }>;
}

/** KEYS[1] the mark; ARGV[1] the interval in ms. Returns the wait in microseconds (an integer). */
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1]) * 1000
local mark = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(mark, now)
local nextMark = slot + interval
redis.call('SET', KEYS[1], string.format('%d', nextMark), 'PX', math.ceil((nextMark - now) / 1000) + 1000)
return slot - now`;

export function createDeliveryRateLimiter(redis: Redis, prefix: string): DeliveryRateLimiter {
  return {
    async reserve(subscriptionId, perSecond) {
      const intervalMs = 1000 / perSecond;
      const waitMicros = (await redis.eval(
        RESERVE,
        1,
        `${prefix}:delivery-rate:${subscriptionId}`,
        String(intervalMs),
      )) as number;
      return { waitMs: Math.max(0, waitMicros / 1000), intervalMs };
    },
  };
}
