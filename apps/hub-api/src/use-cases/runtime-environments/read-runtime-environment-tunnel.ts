import type { HubDeps } from '../../deps';
import { findRuntimeEnvironment, tunnelHostFacts } from '../../data/runtime-environments.lookups';
import type { EnvironmentWithHosts } from '../../data/runtime-environments.lookups';
import type { TunnelLiveState } from '../../data/tunnel-providers/tunnel-provider';

/**
 * The environment with its tunnel's live state read from the provider now (status and connections); a
 * tunnel that is not the hub's to read (none, or `external`) has no live state.
 */
export async function readRuntimeEnvironmentTunnel(
  deps: HubDeps,
  workspaceId: string,
  name: string,
): Promise<{ environment: EnvironmentWithHosts; live: TunnelLiveState | undefined }> {
  const environment = await findRuntimeEnvironment(deps.db, workspaceId, name);
  const providerName = environment.tunnelProvider;
  // A Cloudflare tunnel whose id was never stored (a provisioning that failed before) has nothing to read.
  const unread = providerName === 'cloudflare' && !environment.tunnelId;
  if (!providerName || providerName === 'external' || environment.tunnelState === 'none' || unread) {
    return { environment, live: undefined };
  }
  const now = deps.now();
  const live = await deps.tunnels.get(providerName).live({
    tunnelId: environment.tunnelId,
    hosts: environment.hosts.map((membership) => tunnelHostFacts(membership.host, now)),
  });
  return { environment, live };
}
