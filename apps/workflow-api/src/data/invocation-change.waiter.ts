import type { Logger, Redis } from '@svc/service-kit';
import { invocationChangeChannel } from './reconcile.queue';

/** One held request's interest in an invocation: woken by each announced change, until closed. */
export interface InvocationWatch {
  /**
   * Resolves with true when a change of the invocation was announced since the watch began or since the last
   * `next`, false after `ms` or on `signal`'s abort, whichever comes first.
   */
  next(ms: number, signal?: AbortSignal): Promise<boolean>;
  close(): void;
}

export interface InvocationChangeWaiter {
  /** Starts watching before the caller reads the invocation, so a change committed after that read wakes it. */
  watch(invocationId: string): InvocationWatch;
  /** True while the subscription is confirmed: announcements arrive (otherwise callers re-read more often). */
  listening(): boolean;
  /** Held watches (for tests and metrics). */
  size(): number;
}

/**
 * The long-poll side of invocation changes: one Redis subscription per process, a map of held requests keyed by
 * invocation id. Redis is never the source of truth: a woken request confirms the change in Postgres, and a
 * request held while the subscription is down (or whose announcement was lost) re-reads on its own schedule.
 */
export function createInvocationChangeWaiter(options: {
  /** A connection of its own (it enters subscriber mode); connected on the first watch. */
  subscriber: Redis;
  prefix: string;
  logger: Logger;
}): InvocationChangeWaiter & { close(): Promise<void> } {
  const watching = new Map<string, Set<() => void>>();
  const channel = invocationChangeChannel(options.prefix);
  let subscribed = false;
  let confirmed = false;
  const subscribe = () => {
    if (subscribed) return;
    subscribed = true;
    options.subscriber.subscribe(channel).then(
      () => (confirmed = true),
      (error: unknown) => {
        subscribed = false;
        options.logger.warn(
          { err: error },
          'invocation change subscription failed; waits re-read the database',
        );
      },
    );
  };
  // A reconnect re-subscribes (ioredis does so itself); until then the held requests re-read on their own.
  options.subscriber.on('ready', () => {
    if (subscribed) confirmed = true;
  });
  options.subscriber.on('end', () => (confirmed = false));
  options.subscriber.on('close', () => (confirmed = false));
  options.subscriber.on('message', (ch: string, invocationId: string) => {
    if (ch !== channel) return;
    for (const wake of watching.get(invocationId) ?? []) wake();
  });
  options.subscriber.on('error', (error) =>
    options.logger.warn({ err: error }, 'invocation change subscriber error'),
  );
  return {
    watch(invocationId) {
      subscribe();
      let changed = false;
      let waiter: (() => void) | undefined;
      const onChange = () => {
        changed = true;
        waiter?.();
      };
      let set = watching.get(invocationId);
      if (!set) watching.set(invocationId, (set = new Set()));
      set.add(onChange);
      return {
        next(ms, signal) {
          return new Promise<boolean>((resolve) => {
            const finish = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', finish);
              waiter = undefined;
              const woke = changed;
              changed = false;
              resolve(woke);
            };
            if (changed || signal?.aborted) return finish();
            waiter = finish;
            const timer = setTimeout(finish, Math.max(0, ms));
            timer.unref?.();
            signal?.addEventListener('abort', finish, { once: true });
          });
        },
        close() {
          waiter?.();
          const current = watching.get(invocationId);
          current?.delete(onChange);
          if (current && current.size === 0) watching.delete(invocationId);
        },
      };
    },
    listening: () => confirmed && options.subscriber.status === 'ready',
    size: () => [...watching.values()].reduce((n, set) => n + set.size, 0),
    async close() {
      for (const wakers of watching.values()) for (const wake of wakers) wake();
      watching.clear();
      if (options.subscriber.status !== 'ready') options.subscriber.disconnect();
      else await options.subscriber.quit().catch(() => options.subscriber.disconnect());
    },
  };
}
