import type { Announcements } from './announcements.subscriber';
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
 * The long-poll side of invocation changes, keyed by invocation id on the process's announcement subscription.
 * A woken request confirms the change in Postgres; a request held while the subscription is down (or whose
 * announcement was lost) re-reads on its own schedule.
 */
export function createInvocationChangeWaiter(options: {
  announcements: Announcements;
  prefix: string;
}): InvocationChangeWaiter {
  const { announcements } = options;
  const channel = invocationChangeChannel(options.prefix);
  return {
    watch(invocationId) {
      let changed = false;
      let waiter: (() => void) | undefined;
      const stop = announcements.listen(channel, invocationId, () => {
        changed = true;
        waiter?.();
      });
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
            const timer = setTimeout(finish, Math.max(0, ms));
            timer.unref?.();
            if (changed || signal?.aborted) return finish();
            waiter = finish;
            signal?.addEventListener('abort', finish, { once: true });
          });
        },
        close() {
          waiter?.();
          stop();
        },
      };
    },
    listening: () => announcements.listening(channel),
    size: () => announcements.size(channel),
  };
}
