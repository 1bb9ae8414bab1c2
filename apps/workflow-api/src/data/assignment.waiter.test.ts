import type { Announcements } from './announcements.subscriber';
import { createAssignmentWaiter } from './assignment.waiter';

/** Announcements kept in memory: `announce` calls the listeners of a key as a message on the channel would. */
function memoryAnnouncements() {
  const listeners = new Map<string, Set<() => void>>();
  const announcements = {
    listen(_channel: string, key: string, onAnnounce: () => void) {
      if (!listeners.has(key)) listeners.set(key, new Set());
      listeners.get(key)!.add(onAnnounce);
      return () => listeners.get(key)?.delete(onAnnounce);
    },
  } as unknown as Announcements;
  return {
    announcements,
    announce: (key: string) => listeners.get(key)?.forEach((listener) => listener()),
    size: (key: string) => listeners.get(key)?.size ?? 0,
  };
}

describe('the assignment waiter', () => {
  test('when an assignment is announced after the watch began but before the wait, then the wait ends at once', async () => {
    const memory = memoryAnnouncements();
    const watch = createAssignmentWaiter({ announcements: memory.announcements, prefix: 't' }).watch('agt_a');
    // The caller reads the agent's stages here (none yet); the engine commits an assignment and announces it.
    memory.announce('agt_a');
    const started = Date.now();
    await watch.wait(30_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    watch.stop();
    expect(memory.size('agt_a')).toBe(0);
  });

  test('when nothing is announced for the agent, then the wait ends with its time or its signal; another agent’s announcement does not end it', async () => {
    const memory = memoryAnnouncements();
    const waiter = createAssignmentWaiter({ announcements: memory.announcements, prefix: 't' });
    const watch = waiter.watch('agt_a');
    const started = Date.now();
    const waited = watch.wait(150);
    memory.announce('agt_b');
    await waited;
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);

    const abort = new AbortController();
    const aborted = watch.wait(30_000, abort.signal);
    abort.abort();
    await aborted;

    const woken = watch.wait(30_000);
    memory.announce('agt_a');
    await woken;
    watch.stop();
  });
});
