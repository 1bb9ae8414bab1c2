/** A readiness check: resolves when the dependency answers, rejects (or times out) when it does not. */
export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, string>;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      timer.unref();
    }),
  ]);
}

/** Runs every check concurrently; each gets `ok` or `failed: <reason>` (reasons carry no secrets). */
export async function runReadinessChecks(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = 2000,
): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), timeoutMs);
        return [name, 'ok'] as const;
      } catch (error) {
        const reason = (error as Error)?.message?.split('\n')[0] ?? 'unknown error';
        return [name, `failed: ${reason.replace(/:\/\/[^@\s]*@/g, '://')}`] as const;
      }
    }),
  );
  return { ready: entries.every(([, state]) => state === 'ok'), checks: Object.fromEntries(entries) };
}

/** Handler for a `/healthz` operation: the process is up; dependencies are not consulted. */
export function livenessHandler() {
  return () => ({ status: 200 as const, body: { status: 'ok' as const } });
}

/** Handler for a `/readyz` operation: 200 when every check passes, 503 otherwise. */
export function readinessHandler(checks: Record<string, ReadinessCheck>, timeoutMs?: number) {
  return async () => {
    const report = await runReadinessChecks(checks, timeoutMs);
    return report.ready
      ? { status: 200 as const, body: { status: 'ready' as const, checks: report.checks } }
      : { status: 503 as const, body: { status: 'not_ready' as const, checks: report.checks } };
  };
}
