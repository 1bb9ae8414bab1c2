/** The nearest-rank percentile `p` (0–100) of ascending `sorted` values; NaN when there are none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** The values in ascending order, as floats. */
export function ascending(values: Iterable<number>): Float64Array {
  return Float64Array.from(values).sort();
}

/** The median (nearest rank) of the values; NaN when there are none. */
export function median(values: Iterable<number>): number {
  return percentile(ascending(values), 50);
}

/** Latency figures of a measurement, in milliseconds. */
export interface LatencyStats {
  n: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  max_ms: number;
}

/** Count, p50/p90/p99 and maximum of latencies in milliseconds (NaN figures when there are none). */
export function latencyStats(values: Iterable<number>): LatencyStats {
  const sorted = ascending(values);
  return {
    n: sorted.length,
    p50_ms: percentile(sorted, 50),
    p90_ms: percentile(sorted, 90),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : NaN,
  };
}

/** A number with `digits` decimals, or `-` when it is not finite (a measurement that produced nothing). */
export function fixed(n: number, digits = 1): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '-';
}
