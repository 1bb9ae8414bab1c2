import { ascending, percentile } from './stats';

/** One request of a load loop: resolves to `null` on success or to a label counting the failure. */
export type Send = (sequence: number) => Promise<string | null>;

/** When a load loop stops: after a time, or after a number of requests (over all loops together). */
export type LoadLimit = { durationMs: number } | { count: number };

/** What one load run recorded. */
export interface LoadRun {
  latencies: number[];
  errors: Map<string, number>;
  elapsedMs: number;
}

/** A load run summed up: successful requests, their rate and latency, and failures by label. */
export interface LoadSummary {
  name: string;
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: Record<string, number>;
}

/** The label of a request that threw: the socket error code when there is one. */
export function failureLabel(error: unknown): string {
  const e = error as { cause?: { code?: string }; name?: string } | undefined;
  return e?.cause?.code ?? e?.name ?? 'error';
}

/**
 * Closed loop: keeps `concurrency` requests in flight until the limit is reached; every loop stops by itself
 * once it is. Latencies of successful requests are recorded only when `record` is true (a warm-up runs the
 * same loops without recording).
 */
export async function closedLoop(
  send: Send,
  options: { concurrency: number; limit: LoadLimit; record: boolean },
): Promise<LoadRun> {
  const latencies: number[] = [];
  const errors = new Map<string, number>();
  const { limit } = options;
  const started = performance.now();
  const deadline = 'durationMs' in limit ? started + limit.durationMs : Infinity;
  const count = 'count' in limit ? limit.count : Infinity;
  let next = 0;
  async function loop(): Promise<void> {
    while (next < count && performance.now() < deadline) {
      const sequence = next;
      next += 1;
      const t0 = performance.now();
      const failure = await send(sequence);
      if (failure !== null) errors.set(failure, (errors.get(failure) ?? 0) + 1);
      else if (options.record) latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  return { latencies, errors, elapsedMs: performance.now() - started };
}

/** Requests/s, p50 and p99 of a load run, under a name. */
export function summarizeLoad(name: string, run: LoadRun): LoadSummary {
  const sorted = ascending(run.latencies);
  return {
    name,
    requests: run.latencies.length,
    rps: run.latencies.length / (run.elapsedMs / 1000),
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    errors: Object.fromEntries(run.errors),
  };
}

/**
 * Warms every target up, then measures them in alternating slices (a, b, a, b, …, `rounds` of each), so a
 * change of load on the machine hits every target alike; resolves to one summary per target.
 */
export async function measureAlternating(
  targets: { name: string; send: Send }[],
  options: { concurrency: number; rounds: number; warmup: LoadLimit; slice: LoadLimit },
): Promise<LoadSummary[]> {
  const { concurrency } = options;
  for (const target of targets)
    await closedLoop(target.send, { concurrency, limit: options.warmup, record: false });
  const totals: LoadRun[] = targets.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0 }));
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [i, target] of targets.entries()) {
      const run = await closedLoop(target.send, { concurrency, limit: options.slice, record: true });
      const total = totals[i] as LoadRun;
      for (const latency of run.latencies) total.latencies.push(latency);
      for (const [label, n] of run.errors) total.errors.set(label, (total.errors.get(label) ?? 0) + n);
      total.elapsedMs += run.elapsedMs;
    }
  }
  return targets.map((target, i) => summarizeLoad(target.name, totals[i] as LoadRun));
}

/**
 * A {@link Send} that fetches `url` with the request `init(sequence)` builds; it succeeds when the answer has
 * `status` (default 200) and passes `check` on its text, and otherwise fails as `HTTP <status>`.
 */
export function httpSender(
  url: string,
  options: {
    init?: (sequence: number) => RequestInit;
    status?: number;
    check?: (text: string) => boolean;
  } = {},
): Send {
  const expected = options.status ?? 200;
  return async (sequence) => {
    try {
      const res = await fetch(url, options.init?.(sequence));
      const text = options.check ? await res.text() : (await res.arrayBuffer(), '');
      if (res.status !== expected || (options.check && !options.check(text))) return `HTTP ${res.status}`;
      return null;
    } catch (error) {
      return failureLabel(error);
    }
  };
}

/** The total of every failure count in these summaries. */
export function countErrors(summaries: { errors: Record<string, number> }[]): number {
  return summaries.flatMap((s) => Object.values(s.errors)).reduce((a, b) => a + b, 0);
}
