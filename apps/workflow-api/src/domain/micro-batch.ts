/** What one item of a batch came to: its value, or the error that item (alone) failed with. */
export type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface MicroBatchOptions<I, O> {
  /** Runs one batch; answers one outcome per item, in the items' order. A rejection fails every item. */
  run(items: I[]): Promise<Settled<O>[]>;
  /** Most items in one batch. */
  maxBatch: number;
  /** Most batches running at once; items submitted meanwhile wait and go together in the next one. */
  maxInFlight: number;
  /** Items with the same key never share a batch: the later one waits for the next batch. */
  key?: (item: I) => string;
}

interface Waiting<I, O> {
  item: I;
  resolve(value: O): void;
  reject(error: unknown): void;
}

/**
 * Group commit for concurrent callers: each call waits for its own outcome, but the calls made while earlier
 * batches are running go to the database together. Nothing waits for a timer: when a batch may start, it starts
 * on the next turn of the event loop with whatever was submitted by then, so a lone call costs one turn and a
 * busy worker sends one statement for many calls.
 */
export function microBatcher<I, O>(options: MicroBatchOptions<I, O>): (item: I) => Promise<O> {
  const waiting: Waiting<I, O>[] = [];
  let inFlight = 0;
  let scheduled = false;

  const schedule = () => {
    if (scheduled || waiting.length === 0 || inFlight >= options.maxInFlight) return;
    scheduled = true;
    setImmediate(flush);
  };

  const take = (): Waiting<I, O>[] => {
    if (!options.key) return waiting.splice(0, options.maxBatch);
    const batch: Waiting<I, O>[] = [];
    const keys = new Set<string>();
    for (let i = 0; i < waiting.length && batch.length < options.maxBatch;) {
      const key = options.key(waiting[i]!.item);
      if (keys.has(key)) {
        i += 1;
        continue;
      }
      keys.add(key);
      batch.push(...waiting.splice(i, 1));
    }
    return batch;
  };

  function flush(): void {
    scheduled = false;
    while (waiting.length > 0 && inFlight < options.maxInFlight) {
      const batch = take();
      inFlight += 1;
      options
        .run(batch.map((w) => w.item))
        .then(
          (outcomes) =>
            batch.forEach((w, i) => {
              const outcome = outcomes[i];
              if (!outcome) w.reject(new Error('a batch answered fewer outcomes than it had items'));
              else if (outcome.ok) w.resolve(outcome.value);
              else w.reject(outcome.error);
            }),
          (error: unknown) => batch.forEach((w) => w.reject(error)),
        )
        .finally(() => {
          inFlight -= 1;
          schedule();
        });
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      schedule();
    });
}
