import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { measureMemory } from 'node:vm';
import { ConfigError } from './env';

/** Error codes whose cause is a dependency that is not running; start-up says which and how to start it. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);

function describeStartupError(appName: string, error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  const err = error as { code?: string; message?: string; address?: string; port?: number };
  if (err?.code && CONNECTION_CODES.has(err.code)) {
    const where = err.address ? ` at ${err.address}${err.port ? `:${err.port}` : ''}` : '';
    return `${appName}: cannot reach a dependency${where} (${err.code}); is it running?`;
  }
  if (err?.code === 'EADDRINUSE') return `${appName}: the port is already in use (${err.message ?? ''})`;
  return `${appName}: failed to start: ${err?.message ?? String(error)}`;
}

/**
 * WebAssembly stays in V8's baseline compiler (Liftoff). The only WebAssembly the services run is Prisma's query
 * compiler, and only for a query shape not yet in the client's plan cache. With the optimizing tier, V8 compiles
 * the whole module again in the background a few seconds after the first query, which held 35–80 MB more RSS
 * in the hub, the Workflow API and its worker for the life of the process (docs/benchmarks.md, "Service
 * memory"). The flag must be set before the first module is compiled: the entry point sets it first.
 */
export function keepWebAssemblyBaseline(): void {
  setFlagsFromString('--liftoff-only');
}

/** When {@link collectWhenIdle} looks, and how much garbage and how little work make it collect. */
export interface IdleCollectSettings {
  /** How often the heap and the event loop are looked at (ms). */
  everyMs: number;
  /** Heap used above the figure after the last collection that is worth a collection (bytes). */
  garbageBytes: number;
  /** The event loop counts as idle below this share of busy time since the last look (0–1). */
  idleBelow: number;
}

export const IDLE_COLLECT_DEFAULTS: IdleCollectSettings = {
  everyMs: 5_000,
  garbageBytes: 6 * 1024 * 1024,
  idleBelow: 0.05,
};

/**
 * Whether to collect now: the event loop was idle since the last look and the heap holds at least
 * `garbageBytes` more than it did after the last collection (startup's garbage, or a burst's).
 */
export function shouldCollect(
  look: { heapUsed: number; utilization: number; heapUsedAfterLast: number | undefined },
  settings: IdleCollectSettings = IDLE_COLLECT_DEFAULTS,
): boolean {
  if (look.utilization >= settings.idleBelow) return false;
  return (
    look.heapUsedAfterLast === undefined || look.heapUsed - look.heapUsedAfterLast >= settings.garbageBytes
  );
}

/**
 * One full garbage collection, through `vm.measureMemory({ execution: 'eager' })`: measuring the heap makes V8
 * mark it at once, and that collection frees the garbage and gives empty pages back. It is the one public way
 * to ask for a collection without exposing `gc` to every module. Node marks the API experimental and warns
 * once on first use; that one warning is not printed, every other warning is.
 */
export async function collectGarbage(): Promise<void> {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (text.includes('vm.measureMemory')) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  let measuring: Promise<unknown>;
  try {
    measuring = measureMemory({ execution: 'eager' });
  } finally {
    process.emitWarning = emitWarning;
  }
  await measuring;
}

/**
 * Collects the heap's garbage when the process has little to do: every `everyMs` it compares the heap with
 * what was left after the last collection and the event loop's busy share since the last look, and collects
 * once when it was idle and enough garbage piled up ({@link shouldCollect}). Under load it never collects (V8
 * does, as it needs); at idle it frees what a burst or the start-up left (12–15 MB of heap in the hub and the
 * workflow worker, docs/benchmarks.md "Service memory"), which V8 would otherwise keep until the next
 * collection it schedules. The timer does not keep the process alive. Returns a stop function.
 */
export function collectWhenIdle(settings: IdleCollectSettings = IDLE_COLLECT_DEFAULTS): () => void {
  let heapUsedAfterLast: number | undefined;
  let loop = performance.eventLoopUtilization();
  let collecting = false;
  const timer = setInterval(() => {
    const since = performance.eventLoopUtilization(loop);
    loop = performance.eventLoopUtilization();
    const heapUsed = process.memoryUsage().heapUsed;
    if (
      collecting ||
      !shouldCollect({ heapUsed, utilization: since.utilization, heapUsedAfterLast }, settings)
    )
      return;
    collecting = true;
    collectGarbage()
      .catch(() => undefined)
      .finally(() => {
        collecting = false;
        heapUsedAfterLast = process.memoryUsage().heapUsed;
        loop = performance.eventLoopUtilization();
      });
  }, settings.everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs an app's entry point. A configuration or start-up failure prints exactly one line on stderr and
 * exits 1 — no stack trace for problems the operator can fix. Once started, the process collects its garbage
 * when idle ({@link collectWhenIdle}).
 */
export function runMain(appName: string, main: () => Promise<void>): void {
  keepWebAssemblyBaseline();
  main()
    .then(() => {
      collectWhenIdle();
    })
    .catch((error: unknown) => {
      process.stderr.write(`${describeStartupError(appName, error)}\n`);
      process.exit(1);
    });
}
