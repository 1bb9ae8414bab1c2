import type { Logger, Redis } from '@svc/service-kit';
import { assignmentChannel } from './reconcile.queue';

/** Something that resolves when an assignment for an agent is announced (or the time is up). */
export interface AssignmentWaiter {
  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Waits for assignment announcements on one Redis subscription per process. Each waiting request is woken by
 * an announcement for its agent, by its own timeout or by its abort signal, whichever comes first. There is a
 * race the caller covers: an assignment committed just before the wait began is seen by the re-read after it.
 */
export function createAssignmentWaiter(options: {
  /** A connection of its own (it enters subscriber mode); connected on the first wait. */
  subscriber: Redis;
  prefix: string;
  logger: Logger;
}): AssignmentWaiter & { close(): Promise<void> } {
  const waiting = new Map<string, Set<() => void>>();
  const channel = assignmentChannel(options.prefix);
  let subscribed = false;
  const subscribe = () => {
    if (subscribed) return;
    subscribed = true;
    options.subscriber.subscribe(channel).catch((error: unknown) => {
      options.logger.warn({ err: error }, 'assignment subscription failed; long-polls end by timeout');
    });
  };
  options.subscriber.on('message', (ch: string, agentId: string) => {
    if (ch !== channel) return;
    const wakers = waiting.get(agentId);
    if (!wakers) return;
    waiting.delete(agentId);
    for (const wake of wakers) wake();
  });
  options.subscriber.on('error', (error) =>
    options.logger.warn({ err: error }, 'assignment subscriber error'),
  );
  return {
    wait(agentId, ms, signal) {
      subscribe();
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        let set = waiting.get(agentId);
        if (!set) waiting.set(agentId, (set = new Set()));
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          const current = waiting.get(agentId);
          current?.delete(done);
          if (current && current.size === 0) waiting.delete(agentId);
          resolve();
        };
        const timer = setTimeout(done, ms);
        timer.unref?.();
        signal?.addEventListener('abort', done, { once: true });
        set.add(done);
      });
    },
    async close() {
      for (const wakers of waiting.values()) for (const wake of wakers) wake();
      waiting.clear();
      if (options.subscriber.status === 'wait') options.subscriber.disconnect();
      else await options.subscriber.quit().catch(() => options.subscriber.disconnect());
    },
  };
}
