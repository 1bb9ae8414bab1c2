/** A readiness check: resolves when the dependency answers, rejects (or times out) when it does not. */
export type ReadinessCheck = () => Promise<void>;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, string>;
}

/**
 * Rejects when `work` has not settled within `ms` (the work itself is not cancelled; it only stops being waited
 * for). `what` names it in the error.
 */
export function withDeadline<T>(work: Promise<T>, ms: number, what = 'the operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    work.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
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
        await withDeadline(check(), timeoutMs, 'the check');
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

function describeFetchFailure(target: string, error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; cause?: { code?: unknown } };
  if (err?.name === 'TimeoutError') return `${target} did not answer within ${timeoutMs} ms`;
  const code = typeof err?.cause?.code === 'string' ? ` (${err.cause.code})` : '';
  return `${target} unreachable${code}`;
}

/**
 * Readiness of an HTTP dependency: GET `url` must answer 2xx within the timeout, and `inspect` (when
 * given) must accept the parsed JSON body. Failure reasons name the dependency (`target`), never the URL,
 * which may carry credentials.
 */
export function httpCheck(options: {
  url: string;
  target: string;
  timeoutMs: number;
  inspect?: (body: unknown) => void;
}): ReadinessCheck {
  const { url, target, timeoutMs } = options;
  return async () => {
    const signal = AbortSignal.timeout(timeoutMs);
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, signal });
    } catch (error) {
      throw new Error(describeFetchFailure(target, error, timeoutMs), { cause: error });
    }
    if (!response.ok || !options.inspect) {
      await response.body?.cancel();
      if (!response.ok) throw new Error(`${target} answered HTTP ${response.status}`);
      return;
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      const timedOut = (error as { name?: string })?.name === 'TimeoutError';
      throw new Error(
        timedOut ? describeFetchFailure(target, error, timeoutMs) : `${target} answered with invalid JSON`,
        {
          cause: error,
        },
      );
    }
    options.inspect(body);
  };
}
