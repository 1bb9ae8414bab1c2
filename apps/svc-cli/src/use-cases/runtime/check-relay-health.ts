import { probe } from '../../data/local-service-probe';
import { CliError } from '../../domain/cli-error';
import type { RelayAddress } from '../../domain/relay-address';

export interface RelayHealth {
  url: string;
  live: boolean;
  ready: boolean;
  /** The relay's readiness checks (`ok` or `failed: <reason>`), as `/readyz` reports them. */
  checks: Record<string, string>;
}

/** `svc internal relay health`: `/healthz` and `/readyz`; a relay that is not ready is exit 1. */
export async function checkRelayHealth(address: RelayAddress): Promise<RelayHealth> {
  const [live, ready] = await Promise.all([probe(`${address.url}/healthz`), probe(`${address.url}/readyz`)]);
  const checks = ((ready.body as { checks?: Record<string, string> } | null)?.checks ?? {}) as Record<
    string,
    string
  >;
  const health = { url: address.url, live: live.ok, ready: ready.ok, checks };
  if (!live.ok || !ready.ok) {
    throw new CliError({
      code: live.ok ? 'relay_not_ready' : 'relay_not_running',
      message: live.ok
        ? `the relay on ${address.url} is not ready (${ready.detail ?? 'not ready'})`
        : `the relay does not answer on ${address.url} (${live.detail ?? 'down'})`,
      fix: live.ok
        ? 'svc config pull-runtime, then restart the relay'
        : 'svc internal relay start --daemon (or svc runtime up)',
      details: health,
    });
  }
  return health;
}
