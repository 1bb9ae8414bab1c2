import { closedLoop, countErrors, measureAlternating } from './load';

describe('closedLoop', () => {
  test('when limited to a count, then exactly that many requests are sent over all loops, numbered from 0', async () => {
    const seen: number[] = [];
    const run = await closedLoop(
      async (sequence) => {
        seen.push(sequence);
        return sequence % 5 === 0 ? 'HTTP 500' : null;
      },
      { concurrency: 4, limit: { count: 20 }, record: true },
    );
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(run.latencies).toHaveLength(16);
    expect(run.errors).toEqual(new Map([['HTTP 500', 4]]));
  });

  test('when not recording, then failures are still counted but no latency is kept', async () => {
    const run = await closedLoop(async () => 'ECONNREFUSED', {
      concurrency: 2,
      limit: { count: 3 },
      record: false,
    });
    expect(run.latencies).toEqual([]);
    expect(run.errors.get('ECONNREFUSED')).toBe(3);
  });

  test('when limited to a duration, then every loop stops by itself after it', async () => {
    const started = performance.now();
    const run = await closedLoop(() => new Promise((resolve) => setTimeout(() => resolve(null), 5)), {
      concurrency: 3,
      limit: { durationMs: 60 },
      record: true,
    });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(run.latencies.length).toBeGreaterThan(0);
  });
});

describe('measureAlternating', () => {
  test('when two targets are measured in rounds, then each gets its slices summed and named', async () => {
    const calls: string[] = [];
    const send = (name: string) => async () => {
      calls.push(name);
      return null;
    };
    const [a, b] = await measureAlternating(
      [
        { name: 'a', send: send('a') },
        { name: 'b', send: send('b') },
      ],
      { concurrency: 1, rounds: 3, warmup: { count: 1 }, slice: { count: 2 } },
    );
    expect(calls.join('')).toBe('ab' + 'aabb'.repeat(3));
    expect(a).toMatchObject({ name: 'a', requests: 6, errors: {} });
    expect(b).toMatchObject({ name: 'b', requests: 6, errors: {} });
    expect(countErrors([a!, b!])).toBe(0);
  });
});
