import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findRuntimeHostFor } from '../../data/runtime-hosts.lookups';

export interface TunnelConnector {
  runtimeInstanceId: string;
  environmentName: string | null;
  connector: { provider: 'cloudflare'; tunnelId: string; token: string } | null;
}

/**
 * What the host's tunnel connector runs with: the connector token of its environment's active Cloudflare
 * tunnel, opened from its sealed form, or no connector at all. Each read that hands out a token is audited
 * as `credential.tunnel_token.read`, never with the token.
 */
export async function getTunnelConnector(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  requestId?: string,
): Promise<TunnelConnector> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const membership = await deps.db.runtimeEnvironmentHost.findUnique({
    where: { runtimeInstanceId: host.id },
    include: { environment: true },
  });
  const environment = membership?.environment ?? null;
  if (
    !environment ||
    environment.tunnelProvider !== 'cloudflare' ||
    environment.tunnelState !== 'active' ||
    !environment.tunnelId ||
    !environment.connectorTokenCiphertext
  ) {
    return { runtimeInstanceId: host.id, environmentName: environment?.name ?? null, connector: null };
  }
  const token = deps.box.open(environment.connectorTokenCiphertext, environment.id);
  await deps.audit.record({
    workspaceId: host.workspaceId,
    actor,
    action: 'credential.tunnel_token.read',
    targetType: 'runtime_environment',
    targetId: environment.id,
    data: { runtime_instance_id: host.id, name: environment.name, tunnel_id: environment.tunnelId },
    requestId,
  });
  return {
    runtimeInstanceId: host.id,
    environmentName: environment.name,
    connector: { provider: 'cloudflare', tunnelId: environment.tunnelId, token },
  };
}
