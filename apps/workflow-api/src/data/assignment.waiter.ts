import type { Announcements } from './announcements.subscriber';
import { assignmentChannel } from './reconcile.queue';

/** Something that resolves when an assignment for an agent is announced (or the time is up). */
export interface AssignmentWaiter {
  wait(agentId: string, ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Waits for assignment announcements on the process's announcement subscription. Each waiting request is woken
 * by an announcement for its agent, by its own timeout or by its abort signal, whichever comes first. There is a
 * race the caller covers: an assignment committed just before the wait began is seen by the re-read after it.
 */
export function createAssignmentWaiter(options: {
  announcements: Announcements;
  prefix: string;
}): AssignmentWaiter {
  const channel = assignmentChannel(options.prefix);
  return {
    wait(agentId, ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal?.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          stop();
          resolve();
        };
        const stop = options.announcements.listen(channel, agentId, done);
        const timer = setTimeout(done, ms);
        timer.unref?.();
        signal?.addEventListener('abort', done, { once: true });
      });
    },
  };
}
