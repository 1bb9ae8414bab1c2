import type { Logger } from 'pino';
import type { Redis } from 'ioredis';

/**
 * What the hub announces when a runtime host's console route table changes (an agent registered on it,
 * started, stopped, evicted or deleted): the host's console router reloads its table at once instead of at its
 * next poll. The notice only wakes the router; the table it loads is the hub's, read from Postgres, and the
 * router's poll stays as the fallback, so a lost notice costs time, never a route (decision 73).
 */
export interface ConsoleRouteNotice {
  workspace_id: string;
  /** The runtime host whose table changed (`rti_…`), or null when the agent has none. */
  host_id: string | null;
  agent_id: string;
}

/** The Redis pub/sub channel of the notices, under the deployment's key prefix (`svc` unless configured). */
export function consoleRouteNoticeChannel(prefix: string): string {
  return `${prefix}:console-routes`;
}

export interface ConsoleRouteNoticePublisher {
  /** Announces a change after it is committed. Never throws: a notice that cannot be sent is logged. */
  publish(notice: ConsoleRouteNotice): Promise<void>;
}

export function createConsoleRouteNoticePublisher(options: {
  redis: Redis;
  prefix: string;
  logger: Logger;
}): ConsoleRouteNoticePublisher {
  const channel = consoleRouteNoticeChannel(options.prefix);
  return {
    async publish(notice) {
      try {
        await options.redis.publish(channel, JSON.stringify(notice));
      } catch (error) {
        options.logger.warn({ err: error }, 'console route notice not published');
      }
    },
  };
}

/** A publisher that sends nothing, for a hub without Redis (routers then rely on their poll). */
export const silentConsoleRouteNotices: ConsoleRouteNoticePublisher = { publish: async () => undefined };
