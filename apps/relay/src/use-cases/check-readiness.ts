import type { ReadinessCheck } from '@svc/service-kit';
import type { RelayConfig } from '../env';

type Settings = Pick<RelayConfig, 'hubUrl' | 'workspace' | 'workspaceApiKey'>;

/** The settings the relay needs before it is ready, by readiness check name. */
const REQUIRED_SETTINGS = [
  { check: 'hub_url', variable: 'SVC_HUB_URL', value: (s: Settings) => s.hubUrl },
  { check: 'workspace', variable: 'SVC_WORKSPACE', value: (s: Settings) => s.workspace },
  {
    check: 'workspace_api_key',
    variable: 'SVC_WORKSPACE_API_KEY',
    value: (s: Settings) => s.workspaceApiKey,
  },
] as const;

/** Names of the environment variables that are not set (never their values). */
export function missingSettings(settings: Settings): string[] {
  return REQUIRED_SETTINGS.filter((s) => !s.value(settings)).map((s) => s.variable);
}

function describeFetchFailure(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; cause?: { code?: unknown } };
  if (err?.name === 'TimeoutError') return `hub did not answer within ${timeoutMs} ms`;
  const code = typeof err?.cause?.code === 'string' ? ` (${err.cause.code})` : '';
  return `hub unreachable${code}`;
}

/** GET `<hub>/healthz`; anything but a 2xx within the timeout fails. The hub URL is not echoed. */
function hubAnswers(hubUrl: string, timeoutMs: number): ReadinessCheck {
  const url = `${hubUrl.replace(/\/+$/, '')}/healthz`;
  return async () => {
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw new Error(describeFetchFailure(error, timeoutMs), { cause: error });
    }
    await response.body?.cancel();
    if (!response.ok) throw new Error(`hub answered HTTP ${response.status}`);
  };
}

/**
 * The relay's readiness checks: each required setting is present (`failed: missing SVC_…` otherwise) and,
 * once all are, the hub answers its liveness route. Reasons name variables, never values.
 */
export function relayReadinessChecks(
  settings: Settings,
  options: { hubTimeoutMs: number },
): Record<string, ReadinessCheck> {
  const checks: Record<string, ReadinessCheck> = {};
  for (const setting of REQUIRED_SETTINGS) {
    const present = Boolean(setting.value(settings));
    checks[setting.check] = async () => {
      if (!present) throw new Error(`missing ${setting.variable}`);
    };
  }
  if (settings.hubUrl && missingSettings(settings).length === 0) {
    checks.hub = hubAnswers(settings.hubUrl, options.hubTimeoutMs);
  }
  return checks;
}
