import { appendFileSync } from 'node:fs';
import type { OperationPlan } from './operation-fuzz';

/** How many requests each phase of each operation draws, and the seed to replay a run. */
export interface FuzzSettings {
  /** `SVC_FUZZ_RUNS` (default 4 in CI; raise it for a longer search). */
  numRuns: number;
  /** `SVC_FUZZ_SEED` replays a run whose failure printed its seed; unset, fast-check picks one. */
  seed: number | undefined;
}

export function fuzzSettings(env: NodeJS.ProcessEnv = process.env, defaultRuns = 4): FuzzSettings {
  const runs = Number(env.SVC_FUZZ_RUNS ?? defaultRuns);
  const seed = env.SVC_FUZZ_SEED === undefined ? undefined : Number(env.SVC_FUZZ_SEED);
  if (!Number.isInteger(runs) || runs < 1) throw new Error('SVC_FUZZ_RUNS must be a positive integer');
  if (seed !== undefined && !Number.isInteger(seed)) throw new Error('SVC_FUZZ_SEED must be an integer');
  return { numRuns: runs, seed };
}

/**
 * Operations that end what later requests depend on (deleting, evicting, stopping, rotating a credential)
 * run after all others, in document order within each group, so the fixtures stay usable for everything
 * else.
 */
export function orderForFuzz(
  plans: OperationPlan[],
  ending: (plan: OperationPlan) => boolean,
): OperationPlan[] {
  return [...plans.filter((p) => !ending(p)), ...plans.filter(ending)];
}

/**
 * Fails the property with the exchange, or with `SVC_FUZZ_REPORT=<file>` appends it to that file and lets
 * the run go on, to survey every finding of a document at once.
 */
export function reportOrThrow(
  operationId: string,
  exchange: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (!env.SVC_FUZZ_REPORT) throw new Error(exchange);
  appendFileSync(env.SVC_FUZZ_REPORT, `${JSON.stringify({ operationId, exchange })}\n`);
}

/** With `SVC_FUZZ_STATS=<file>`, appends each answer's operation, phase, status and code: what a run reached. */
export function recordAnswer(
  operationId: string,
  phase: string,
  answer: { status: number; body: unknown },
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (!env.SVC_FUZZ_STATS) return;
  const code = (answer.body as { code?: unknown } | undefined)?.code ?? '';
  appendFileSync(env.SVC_FUZZ_STATS, `${operationId}\t${phase}\t${answer.status}\t${String(code)}\n`);
}
