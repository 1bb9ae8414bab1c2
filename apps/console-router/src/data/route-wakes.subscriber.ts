import type * as IORedis from 'ioredis';
import type { Redis } from 'ioredis';
import type { Logger } from '@svc/service-kit/http';

export interface RouteWakesOptions {
  redisUrl: string;
  /** The services' key prefix: the hub announces on `<prefix>:console-routes` and `<prefix>:credential-notices`. */
  prefix: string;
  /** This host (`rti_…`): an announcement naming it wakes the router. */
  hostId: string | undefined;
  /** The workspace of the table in use: an announcement about it (a member, another agent) wakes the router too. */
  workspaceId: () => string | undefined;
  /** Reloads the table (the router's own rate and coalescing apply). */
  wake: () => void;
  logger: Logger;
}

export interface RouteWakes {
  /** Resolves once subscribed (announcements published before are not seen: the poll covers them). */
  ready: Promise<void>;
  /** Announcements that woke the router. */
  readonly woken: number;
  close(): Promise<void>;
}

/** The workspace and host an announcement names, or undefined when it is not one. */
function namesOf(message: string): { workspace?: unknown; host?: unknown } | undefined {
  try {
    const value = JSON.parse(message) as Record<string, unknown> | null;
    return value && typeof value === 'object'
      ? { workspace: value.workspace_id, host: value.host_id }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Push to wake, pull to be sure (decision 73): the hub announces on Redis that a host's route table changed
 * (an agent started, stopped, evicted or deleted: `<prefix>:console-routes`) or that a membership or an agent's
 * standing did (`<prefix>:credential-notices`), and the router reloads its table from the hub at once. The
 * announcement carries no route: the table is the hub's, and the router keeps polling it, so a lost
 * announcement or a Redis outage costs time, never a route. Its own connection (ioredis, loaded only when a
 * Redis URL is set), which resubscribes by itself after a reconnect.
 */
export function subscribeRouteWakes(options: RouteWakesOptions): RouteWakes {
  const channels = [`${options.prefix}:console-routes`, `${options.prefix}:credential-notices`];
  // Loaded here rather than at the top: a router without Redis never loads the client.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Redis: RedisClient } = require('ioredis') as typeof IORedis;
  const subscriber: Redis = new RedisClient(options.redisUrl, {
    connectionName: 'console-router-route-wakes',
    lazyConnect: false,
    maxRetriesPerRequest: null,
  });
  let woken = 0;
  let warned = false;
  subscriber.on('error', (error: Error) => {
    if (warned) return;
    warned = true;
    options.logger.warn({ err: error }, 'route announcements unavailable; the route table is polled');
  });
  subscriber.on('ready', () => {
    warned = false;
  });
  subscriber.on('message', (channel: string, message: string) => {
    if (!channels.includes(channel)) return;
    const names = namesOf(message);
    if (!names) return;
    const workspace = options.workspaceId();
    const ours =
      (options.hostId !== undefined && names.host === options.hostId) ||
      (workspace === undefined ? names.workspace !== undefined : names.workspace === workspace);
    if (!ours) return;
    woken += 1;
    options.wake();
  });
  const ready = subscriber.subscribe(...channels).then(
    () => undefined,
    (error: unknown) => {
      options.logger.warn({ err: error }, 'route announcements not subscribed; the route table is polled');
    },
  );
  return {
    ready,
    get woken() {
      return woken;
    },
    async close() {
      subscriber.disconnect();
      await ready.catch(() => undefined);
    },
  };
}
