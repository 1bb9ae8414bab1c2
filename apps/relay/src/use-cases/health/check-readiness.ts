import { httpCheck } from '@svc/service-kit';
import type { ReadinessCheck } from '@svc/service-kit';
import type { RelayConfig } from '../../env';

type Settings = Pick<RelayConfig, 'hubUrl' | 'workspace' | 'workspaceApiKey'>;
type SpawnSettings = Pick<RelayConfig, 'relayToken' | 'workspaceApiKeyFile'>;

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
 * The relay's readiness checks: each required setting is present (`failed: missing SVC_…` otherwise); the
 * spawn settings are (a relay without a token does not serve spawns); and, once the hub settings are all
 * there, the hub answers and accepts the workspace API key. Reasons name variables, never values. The key is
 * read at every check through `apiKey` (it may be replaced on SIGHUP); a key file counts as a key setting.
 */
export function relayReadinessChecks(
  settings: Settings & SpawnSettings,
  options: { hubTimeoutMs: number; apiKey?: () => string | undefined },
): Record<string, ReadinessCheck> {
  const apiKey = options.apiKey ?? (() => settings.workspaceApiKey);
  const current = (): Settings => ({ ...settings, workspaceApiKey: apiKey() });
  const checks: Record<string, ReadinessCheck> = {};
  for (const setting of REQUIRED_SETTINGS) {
    checks[setting.check] = async () => {
      if (!setting.value(current())) throw new Error(`missing ${setting.variable}`);
    };
  }
  // Without a token the relay serves no spawns at all. A relay with a token that cannot run svc (no
  // SVC_RELAY_SVC_ENTRY or host id, e.g. one run on its own by compose) stays ready for what it does, and
  // answers a spawn with 503 host_not_spawn_ready naming what is missing.
  checks.spawn = async () => {
    if (!settings.relayToken) throw new Error('spawn disabled: missing SVC_RELAY_TOKEN');
  };
  const keySetting = Boolean(settings.workspaceApiKey || settings.workspaceApiKeyFile);
  if (
    settings.hubUrl &&
    keySetting &&
    missingSettings({ ...settings, workspaceApiKey: 'set' }).length === 0
  ) {
    const hub = settings.hubUrl.replace(/\/+$/, '');
    const live = httpCheck({ url: `${hub}/healthz`, target: 'hub', timeoutMs: options.hubTimeoutMs });
    checks.hub = async () => {
      const key = apiKey();
      if (!key) throw new Error('missing SVC_WORKSPACE_API_KEY');
      await live();
      const res = await fetch(`${hub}/api/v1/contract`, {
        headers: { accept: 'application/json', 'x-api-key': key },
        signal: AbortSignal.timeout(options.hubTimeoutMs),
      });
      await res.body?.cancel();
      if (res.status === 401 || res.status === 403) {
        throw new Error(`the hub refuses SVC_WORKSPACE_API_KEY (HTTP ${res.status})`);
      }
      if (!res.ok) throw new Error(`hub answered HTTP ${res.status}`);
    };
  }
  return checks;
}
