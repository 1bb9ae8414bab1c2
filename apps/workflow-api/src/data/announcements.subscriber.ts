import type { Logger, Redis } from '@svc/service-kit';

/**
 * The process's one Redis subscription for announcements that wake held requests: an assignment for an agent
 * (its long-poll for stages), a change of an invocation (a held read, `?wait=`). Listeners are keyed by channel
 * and by the message (an agent or invocation id). Redis is never the source of truth: a woken request re-reads
 * Postgres, and a request whose announcement was lost ends by its own timeout or re-reads on its own schedule.
 */
export interface Announcements {
  /** Calls `onAnnounce` for each announcement of `key` on `channel`, until the returned function is called. */
  listen(channel: string, key: string, onAnnounce: () => void): () => void;
  /** True while `channel`'s subscription is confirmed and the connection is up. */
  listening(channel: string): boolean;
  /** Registered listeners on `channel` (for tests and metrics). */
  size(channel: string): number;
  /** Wakes every listener and closes the connection. */
  close(): Promise<void>;
}

export function createAnnouncements(options: {
  /** A connection of its own (it enters subscriber mode); connected on the first listener. */
  subscriber: Redis;
  logger: Logger;
}): Announcements {
  const { subscriber, logger } = options;
  const listeners = new Map<string, Map<string, Set<() => void>>>();
  const subscribed = new Set<string>();
  const confirmed = new Set<string>();
  const subscribe = (channel: string) => {
    if (subscribed.has(channel)) return;
    subscribed.add(channel);
    subscriber.subscribe(channel).then(
      () => confirmed.add(channel),
      (error: unknown) => {
        subscribed.delete(channel);
        logger.warn(
          { err: error, channel },
          'announcement subscription failed; held requests re-read on their own',
        );
      },
    );
  };
  // ioredis re-subscribes by itself after a reconnect; until then held requests rely on their own schedule.
  subscriber.on('ready', () => {
    for (const channel of subscribed) confirmed.add(channel);
  });
  subscriber.on('end', () => confirmed.clear());
  subscriber.on('close', () => confirmed.clear());
  subscriber.on('message', (channel: string, key: string) => {
    for (const announce of [...(listeners.get(channel)?.get(key) ?? [])]) announce();
  });
  subscriber.on('error', (error) => logger.warn({ err: error }, 'announcement subscriber error'));
  return {
    listen(channel, key, onAnnounce) {
      subscribe(channel);
      let byKey = listeners.get(channel);
      if (!byKey) listeners.set(channel, (byKey = new Map()));
      let set = byKey.get(key);
      if (!set) byKey.set(key, (set = new Set()));
      set.add(onAnnounce);
      return () => {
        const current = listeners.get(channel)?.get(key);
        current?.delete(onAnnounce);
        if (current && current.size === 0) listeners.get(channel)?.delete(key);
      };
    },
    listening: (channel) => confirmed.has(channel) && subscriber.status === 'ready',
    size: (channel) => [...(listeners.get(channel)?.values() ?? [])].reduce((n, set) => n + set.size, 0),
    async close() {
      for (const byKey of listeners.values())
        for (const set of byKey.values()) for (const announce of [...set]) announce();
      listeners.clear();
      if (subscriber.status !== 'ready') subscriber.disconnect();
      else await subscriber.quit().catch(() => subscriber.disconnect());
    },
  };
}
