import type { ReadinessCheck } from '@svc/service-kit';

function describeFetchFailure(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; cause?: { code?: unknown } };
  if (err?.name === 'TimeoutError') return `hub did not answer within ${timeoutMs} ms`;
  const code = typeof err?.cause?.code === 'string' ? ` (${err.cause.code})` : '';
  return `hub unreachable${code}`;
}

/**
 * GET `<hub>/.well-known/jwks.json`: ready when it answers 200 with a non-empty `keys` array within the
 * timeout, since without a key no agent token can be verified. The hub URL is not echoed in reasons.
 */
function hubJwksAnswers(hubUrl: string, timeoutMs: number): ReadinessCheck {
  const url = `${hubUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
  return async () => {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new Error(describeFetchFailure(error, timeoutMs), { cause: error });
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`hub answered HTTP ${response.status}`);
    }
    let document: unknown;
    try {
      document = await response.json();
    } catch (error) {
      const timedOut = (error as { name?: string })?.name === 'TimeoutError';
      throw new Error(timedOut ? describeFetchFailure(error, timeoutMs) : 'hub JWKS is not JSON', {
        cause: error,
      });
    }
    const keys = (document as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(keys)) throw new Error('hub JWKS has no keys array');
    if (keys.length === 0) throw new Error('hub JWKS has no keys');
  };
}

/** The console router's readiness checks. */
export function consoleRouterReadinessChecks(options: {
  hubUrl: string;
  hubTimeoutMs: number;
}): Record<string, ReadinessCheck> {
  return { hub_jwks: hubJwksAnswers(options.hubUrl, options.hubTimeoutMs) };
}
