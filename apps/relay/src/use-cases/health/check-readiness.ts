import { httpCheck } from '@svc/service-kit';
import type { ReadinessCheck } from '@svc/service-kit';
import type { RelayConfig } from '../../env';

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
    checks.hub = httpCheck({
      url: `${settings.hubUrl.replace(/\/+$/, '')}/healthz`,
      target: 'hub',
      timeoutMs: options.hubTimeoutMs,
    });
  }
  return checks;
}
