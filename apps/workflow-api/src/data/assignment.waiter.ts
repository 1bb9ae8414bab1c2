import type { Announcements } from './announcements.subscriber';
import { assignmentChannel } from './reconcile.queue';

/** Listening for one agent's assignments, from when it was made. */
export interface AssignmentWatch {
  /**
   * Resolves when an assignment for the agent was announced since the watch began (at once when one already
   * was), after `ms`, or when `signal` aborts, whichever comes first.
   */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops listening. */
  stop(): void;
}

/** Watches for assignments announced for an agent. */
export interface AssignmentWaiter {
  watch(agentId: string): AssignmentWatch;
}

/**
 * Watches the process's announcement subscription for assignments. A caller starts the watch before it reads
 * the agent's stages, so an assignment committed between that read and the wait still wakes it (its announcement
 * comes after its commit): the re-read after the wake sees it.
 */
export function createAssignmentWaiter(options: {
  announcements: Announcements;
  prefix: string;
}): AssignmentWaiter {
  const channel = assignmentChannel(options.prefix);
  return {
    watch(agentId) {
      let announced = false;
      let wake: (() => void) | undefined;
      const stop = options.announcements.listen(channel, agentId, () => {
        announced = true;
        wake?.();
      });
      return {
        wait(ms, signal) {
          return new Promise<void>((resolve) => {
            if (announced || signal?.aborted) return resolve();
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', done);
              wake = undefined;
              resolve();
            };
            wake = done;
            const timer = setTimeout(done, ms);
            timer.unref?.();
            signal?.addEventListener('abort', done, { once: true });
          });
        },
        stop,
      };
    },
  };
}
