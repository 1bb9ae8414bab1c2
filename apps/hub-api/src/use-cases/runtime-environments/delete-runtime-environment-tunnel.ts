import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { Prisma } from '../../generated/prisma/client';
import type { Workspace } from '../../generated/prisma/client';
import {
  ENVIRONMENT_WITH_HOSTS,
  findRuntimeEnvironment,
  storedDnsRecords,
} from '../../data/runtime-environments.lookups';
import type { EnvironmentWithHosts } from '../../data/runtime-environments.lookups';
import { beginTunnelOperation, recordTunnelFailure } from './tunnel-operation';

/**
 * Removes the environment's DNS records and tunnel at its provider (connections cleaned up first, the
 * deletion verified by a read), then forgets them: the tunnel is `none` and the hosts' own URLs apply
 * again. A tunnel set up outside the hub (`external`) has nothing at a provider to remove. Nothing to delete
 * answers the environment as it is.
 */
export async function deleteRuntimeEnvironmentTunnel(
  deps: HubDeps,
  actor: Actor,
  workspace: Workspace,
  name: string,
  requestId?: string,
): Promise<EnvironmentWithHosts> {
  const environment = await findRuntimeEnvironment(deps.db, workspace.id, name);
  if (environment.tunnelState === 'none' && environment.tunnelProvider === null) return environment;
  const providerName = environment.tunnelProvider;
  const provider = providerName && providerName !== 'external' ? deps.tunnels.get(providerName) : null;
  await beginTunnelOperation(deps, environment.id, 'deleting');

  const dnsRecords = storedDnsRecords(environment.dnsRecords);
  try {
    await provider?.delete({
      tunnelId: environment.tunnelId,
      workspaceId: workspace.id,
      workspaceSlug: workspace.slug,
      environmentName: environment.name,
      dnsRecords,
    });
  } catch (error) {
    await recordTunnelFailure(deps, {
      operation: 'delete',
      environment,
      workspaceId: workspace.id,
      actor,
      requestId,
      providerName,
      error,
    });
    throw error;
  }

  return deps.db.$transaction(async (tx) => {
    const updated = await tx.runtimeEnvironment.update({
      where: { id: environment.id },
      data: {
        tunnelProvider: null,
        tunnelState: 'none',
        tunnelId: null,
        tunnelName: null,
        consoleHostname: null,
        relayHostname: null,
        consolePublicBaseUrl: null,
        relayPublicBaseUrl: null,
        connectorTokenCiphertext: null,
        dnsRecords: [],
        ingress: Prisma.DbNull,
        lastError: Prisma.DbNull,
        operationStartedAt: null,
        provisionedAt: null,
      },
      include: ENVIRONMENT_WITH_HOSTS,
    });
    await tx.runtimeEnvironmentHost.updateMany({
      where: { environmentId: environment.id },
      data: { connectorReady: null, connectorCheckedAt: null },
    });
    await deps.audit.record(
      {
        workspaceId: workspace.id,
        actor,
        action: 'tunnel.deleted',
        targetType: 'runtime_environment',
        targetId: environment.id,
        data: {
          name: environment.name,
          provider: providerName,
          tunnel_id: environment.tunnelId,
          dns_record_ids: dnsRecords.map((record) => record.id),
        },
        requestId,
      },
      tx,
    );
    return updated;
  });
}
