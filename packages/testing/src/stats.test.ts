import { latencyStats, median, percentile } from './stats';

describe('percentile', () => {
  test('when asked for p50, p99 and p100 of 1..100, then it answers by nearest rank', () => {
    const sorted = Float64Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
  });

  test('when there is one value, then every percentile is that value', () => {
    expect(percentile([7], 0)).toBe(7);
    expect(percentile([7], 99)).toBe(7);
  });

  test('when there are no values, then it is NaN', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('latencyStats', () => {
  test('when given unsorted latencies, then it reports count, p50/p90/p99 and max', () => {
    const values = Array.from({ length: 10 }, (_, i) => 10 - i);
    expect(latencyStats(values)).toEqual({ n: 10, p50_ms: 5, p90_ms: 9, p99_ms: 10, max_ms: 10 });
  });

  test('when there are no latencies, then the count is 0 and every figure NaN', () => {
    const stats = latencyStats([]);
    expect(stats.n).toBe(0);
    expect([stats.p50_ms, stats.p90_ms, stats.p99_ms, stats.max_ms].every(Number.isNaN)).toBe(true);
  });

  test('when the median of an even count is asked, then it is the lower middle value', () => {
    expect(median([4, 1, 3, 2])).toBe(2);
  });
});
