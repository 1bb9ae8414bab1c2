import { CoalescedReads } from './coalesced-reads';

/** A load whose calls are counted and settled by the test. */
function controlledLoad() {
  const calls: { resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  const load = () =>
    new Promise<number>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { calls, load };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CoalescedReads', () => {
  it('starts a read at once when none is in flight, and forgets the key once it settled', async () => {
    const reads = new CoalescedReads<number>();
    const { calls, load } = controlledLoad();
    const first = reads.read('a', load);
    await tick();
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(1);
    await expect(first).resolves.toBe(1);
    expect(reads.size).toBe(0);
  });

  it('reads asked while one is in flight share the next read, which starts after it', async () => {
    const reads = new CoalescedReads<number>();
    const { calls, load } = controlledLoad();
    const first = reads.read('a', load);
    await tick();
    const later = [reads.read('a', load), reads.read('a', load), reads.read('a', load)];
    await tick();
    // Still one call: the later ones wait, they never get the answer of a read started before they asked.
    expect(calls).toHaveLength(1);
    calls[0]!.resolve(1);
    await expect(first).resolves.toBe(1);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(2);
    await expect(Promise.all(later)).resolves.toEqual([2, 2, 2]);
    expect(reads.size).toBe(0);
  });

  it('keys are independent', async () => {
    const reads = new CoalescedReads<number>();
    const { calls, load } = controlledLoad();
    const a = reads.read('a', load);
    const b = reads.read('b', load);
    await tick();
    expect(calls).toHaveLength(2);
    calls[0]!.resolve(1);
    calls[1]!.resolve(2);
    await expect(Promise.all([a, b])).resolves.toEqual([1, 2]);
  });

  it('a failure reaches the callers of that read only; the next read tries again', async () => {
    const reads = new CoalescedReads<number>();
    const { calls, load } = controlledLoad();
    const first = reads.read('a', load);
    await tick();
    const second = reads.read('a', load);
    calls[0]!.reject(new Error('hub down'));
    await expect(first).rejects.toThrow('hub down');
    await tick();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(7);
    await expect(second).resolves.toBe(7);
  });

  it('a load that throws synchronously rejects its read instead of throwing', async () => {
    const reads = new CoalescedReads<number>();
    await expect(
      reads.read('a', () => {
        throw new Error('bad');
      }),
    ).rejects.toThrow('bad');
    expect(reads.size).toBe(0);
  });

  it('a read asked while the next one is already running joins a third, started after it', async () => {
    const reads = new CoalescedReads<number>();
    const { calls, load } = controlledLoad();
    void reads.read('a', load);
    await tick();
    const second = reads.read('a', load);
    calls[0]!.resolve(1);
    await tick();
    expect(calls).toHaveLength(2);
    const third = reads.read('a', load);
    calls[1]!.resolve(2);
    await expect(second).resolves.toBe(2);
    await tick();
    expect(calls).toHaveLength(3);
    calls[2]!.resolve(3);
    await expect(third).resolves.toBe(3);
  });
});
