/**
 * Concurrent reads of the same thing share one call without ever answering from before they were asked: a read
 * asked while none is in flight starts at once; one asked while a read is in flight waits for the next read,
 * which starts when that one settles and answers everyone who asked meanwhile. So a burst of N identical reads
 * costs two calls at a time instead of N, and every caller still gets an answer read after it asked (what it
 * changed itself just before is in it). A failure reaches the callers of that read only; the next read tries
 * again.
 */
export class CoalescedReads<T> {
  private readonly slots = new Map<string, { current?: Promise<T>; next?: Promise<T> }>();

  /** Reads `key` with `load`, sharing the call with the reads of `key` asked at the same time. */
  read(key: string, load: () => Promise<T>): Promise<T> {
    let slot = this.slots.get(key);
    if (!slot) {
      slot = {};
      this.slots.set(key, slot);
    }
    const current = slot.current;
    if (!current) return this.start(key, slot, load);
    if (!slot.next) {
      const waiting = slot;
      slot.next = current.then(
        () => this.startNext(key, waiting, load),
        () => this.startNext(key, waiting, load),
      );
    }
    return slot.next;
  }

  /** Keys with a read in flight or waiting (for tests and metrics). */
  get size(): number {
    return this.slots.size;
  }

  private startNext(key: string, slot: { current?: Promise<T>; next?: Promise<T> }, load: () => Promise<T>) {
    slot.next = undefined;
    return this.start(key, slot, load);
  }

  private start(
    key: string,
    slot: { current?: Promise<T>; next?: Promise<T> },
    load: () => Promise<T>,
  ): Promise<T> {
    const call = Promise.resolve()
      .then(load)
      .finally(() => {
        // A read waiting to follow this one takes its place (so nobody starts a third meanwhile).
        if (slot.current !== call || slot.next) return;
        slot.current = undefined;
        this.slots.delete(key);
      });
    slot.current = call;
    return call;
  }
}
