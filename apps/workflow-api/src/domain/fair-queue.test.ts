import { FairQueue } from './fair-queue';

const limits = (maxInFlight: number, maxInFlightPerKey: number, maxQueued = 10_000) => ({
  maxInFlight,
  maxInFlightPerKey,
  maxQueued,
});

describe('FairQueue', () => {
  it('admits at once while the key and the total have room', () => {
    const q = new FairQueue<number>(limits(3, 2));
    expect(q.offer('a', 1)).toBe('admitted');
    expect(q.offer('a', 2)).toBe('admitted');
    expect(q.offer('a', 3)).toBe('queued'); // the key's limit
    expect(q.offer('b', 4)).toBe('admitted');
    expect(q.offer('c', 5)).toBe('queued'); // the total's limit
    expect(q.inFlight).toBe(3);
    expect(q.queued).toBe(2);
    expect(q.waitingKeys).toBe(2);
  });

  it('serves a key with one waiting before a flooding key gets its next', () => {
    const q = new FairQueue<string>(limits(2, 2));
    q.offer('a', 'a0');
    q.offer('a', 'a1');
    for (let i = 2; i < 900; i += 1) expect(q.offer('a', `a${i}`)).toBe('queued');
    expect(q.offer('b', 'b0')).toBe('queued');
    expect(q.release('a')).toEqual([{ key: 'b', item: 'b0' }]);
    expect(q.release('a')).toEqual([{ key: 'a', item: 'a2' }]);
    expect(q.release('b')).toEqual([{ key: 'a', item: 'a3' }]);
  });

  it('takes turns among keys with as many in flight, first come first served within a key', () => {
    const q = new FairQueue<string>(limits(1, 1));
    q.offer('a', 'a0');
    for (const item of ['a1', 'a2', 'a3']) q.offer('a', item);
    for (const item of ['b0', 'b1']) q.offer('b', item);
    q.offer('c', 'c0');
    const order: string[] = [];
    let key = 'a';
    for (;;) {
      const [next] = q.release(key);
      if (!next) break;
      order.push(next.item);
      key = next.key;
    }
    expect(order).toEqual(['a1', 'b0', 'c0', 'a2', 'b1', 'a3']);
    expect(q.inFlight).toBe(0);
    expect(q.queued).toBe(0);
  });

  it('lets one key use most of the total when alone, and keeps the rest for others', () => {
    const q = new FairQueue<number>(limits(4, 3));
    expect([1, 2, 3, 4].map((i) => q.offer('a', i))).toEqual(['admitted', 'admitted', 'admitted', 'queued']);
    expect(q.offer('b', 5)).toBe('admitted');
    // A freed slot of the total goes to no key at its own limit.
    expect(q.release('b')).toEqual([]);
    expect(q.release('a')).toEqual([{ key: 'a', item: 4 }]);
  });

  it('forgets an item that gave up, and refuses beyond the queue bound', () => {
    const q = new FairQueue<string>(limits(1, 1, 2));
    q.offer('a', 'a0');
    expect(q.offer('a', 'a1')).toBe('queued');
    expect(q.offer('b', 'b0')).toBe('queued');
    expect(q.offer('c', 'c0')).toBe('refused');
    expect(q.remove('b', 'b0')).toBe(true);
    expect(q.remove('b', 'b0')).toBe(false);
    expect(q.waitingKeys).toBe(1);
    expect(q.release('a')).toEqual([{ key: 'a', item: 'a1' }]);
    expect(q.remove('a', 'a1')).toBe(false);
    expect(q.release('a')).toEqual([]);
    expect(q.inFlight).toBe(0);
  });

  it('refuses a release of a key with nothing in flight and limits that are not positive integers', () => {
    const q = new FairQueue<number>(limits(1, 1));
    expect(() => q.release('a')).toThrow(/nothing in flight/);
    expect(() => new FairQueue(limits(0, 1))).toThrow(RangeError);
    expect(() => new FairQueue(limits(2, 1.5))).toThrow(RangeError);
  });
});
