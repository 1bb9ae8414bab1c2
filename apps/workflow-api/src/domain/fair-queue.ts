/**
 * Fair admission of work by key (decision 100): at most `maxInFlight` items in flight in all, at most
 * `maxInFlightPerKey` of one key, and when a slot frees it goes to the waiting key with the fewest in flight (ties
 * take turns, round-robin), so a key with one waiting item is served before a key with hundreds waiting gets its
 * next one. Within a key, first come
 * first served. Pure bookkeeping: no timers, no I/O; the caller starts what `offer` and `release` admit.
 */
export interface FairQueueLimits {
  /** Items in flight in all (every key). */
  maxInFlight: number;
  /** Items in flight of one key. */
  maxInFlightPerKey: number;
  /** Items waiting in all; an item offered beyond it is refused. */
  maxQueued: number;
}

/** What became of an offered item. */
export type Offer = 'admitted' | 'queued' | 'refused';

export class FairQueue<T> {
  private inFlightTotal = 0;
  private readonly inFlightByKey = new Map<string, number>();
  /** Waiting items by key; the map's order is the round-robin order (a served key moves to the back). */
  private readonly waiting = new Map<string, T[]>();
  private queuedTotal = 0;

  constructor(private readonly limits: FairQueueLimits) {
    for (const [name, value] of Object.entries(limits)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
    }
  }

  /** Admits `item` now when its key and the total have room and none of its key waits; queues it otherwise. */
  offer(key: string, item: T): Offer {
    if (!this.waiting.has(key) && this.hasRoom(key)) {
      this.take(key);
      return 'admitted';
    }
    if (this.queuedTotal >= this.limits.maxQueued) return 'refused';
    const line = this.waiting.get(key);
    if (line) line.push(item);
    else this.waiting.set(key, [item]);
    this.queuedTotal += 1;
    return 'queued';
  }

  /** One item of `key` is done: frees its slot and returns the waiting items admitted in its place. */
  release(key: string): { key: string; item: T }[] {
    const held = this.inFlightByKey.get(key) ?? 0;
    if (held <= 0) throw new Error(`release of key ${key} with nothing in flight`);
    if (held === 1) this.inFlightByKey.delete(key);
    else this.inFlightByKey.set(key, held - 1);
    this.inFlightTotal -= 1;
    return this.drain();
  }

  /** Takes a waiting item out of the queue (it gave up); false when it is not waiting (already admitted). */
  remove(key: string, item: T): boolean {
    const line = this.waiting.get(key);
    const at = line ? line.indexOf(item) : -1;
    if (!line || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.waiting.delete(key);
    this.queuedTotal -= 1;
    return true;
  }

  get inFlight(): number {
    return this.inFlightTotal;
  }

  get queued(): number {
    return this.queuedTotal;
  }

  /** Keys with at least one waiting item. */
  get waitingKeys(): number {
    return this.waiting.size;
  }

  private hasRoom(key: string): boolean {
    return (
      this.inFlightTotal < this.limits.maxInFlight &&
      (this.inFlightByKey.get(key) ?? 0) < this.limits.maxInFlightPerKey
    );
  }

  private take(key: string): void {
    this.inFlightTotal += 1;
    this.inFlightByKey.set(key, (this.inFlightByKey.get(key) ?? 0) + 1);
  }

  /**
   * Admits waiting items while the total has room: each slot goes to the waiting key with the fewest items in
   * flight, ties in round-robin order (a served key moves to the back).
   */
  private drain(): { key: string; item: T }[] {
    const admitted: { key: string; item: T }[] = [];
    while (this.inFlightTotal < this.limits.maxInFlight) {
      // The waiting key with the fewest in flight goes first; among equals, the one whose turn it is.
      let next: string | undefined;
      let fewest = Infinity;
      for (const key of this.waiting.keys()) {
        const held = this.inFlightByKey.get(key) ?? 0;
        if (held < fewest && this.hasRoom(key)) {
          next = key;
          fewest = held;
        }
      }
      if (next === undefined) break;
      const line = this.waiting.get(next)!;
      const item = line.shift()!;
      this.queuedTotal -= 1;
      // The served key goes to the back of the turn order (or leaves it when nothing of it waits).
      this.waiting.delete(next);
      if (line.length > 0) this.waiting.set(next, line);
      this.take(next);
      admitted.push({ key: next, item });
    }
    return admitted;
  }
}
