import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { Prisma } from '../../generated/prisma/client';
import type { Workspace } from '../../generated/prisma/client';
import { isUniqueViolation } from '../../db';
import { resolveRuntimeInstanceId } from '../../data/runtime-hosts.lookups';
import {
  ENVIRONMENT_WITH_HOSTS,
  storedDnsRecords,
  tunnelHostFacts,
} from '../../data/runtime-environments.lookups';
import type { EnvironmentWithHosts } from '../../data/runtime-environments.lookups';
import type { TunnelLiveState, TunnelProviderName } from '../../data/tunnel-providers/tunnel-provider';
import { beginTunnelOperation, recordTunnelFailure } from './tunnel-operation';

export interface ProvisionTunnelInput {
  provider?: TunnelProviderName;
  runtimeInstanceIds?: string[];
  requestId?: string;
}

async function chooseHosts(deps: HubDeps, workspaceId: string, ids: string[] | undefined) {
  if (ids) {
    const hosts = [];
    for (const id of ids) hosts.push(await resolveRuntimeInstanceId(deps.db, workspaceId, id));
    return hosts;
  }
  const hosts = await deps.db.runtimeHost.findMany({
    where: { workspaceId },
    orderBy: { id: 'asc' },
    take: 2,
  });
  if (hosts.length !== 1) {
    throw new AppError({
      status: 400,
      code: 'runtime_instance_ids_required',
      detail:
        hosts.length === 0
          ? 'This workspace has no runtime host; register one first.'
          : 'This workspace has several runtime hosts; name the environment hosts with runtime_instance_ids.',
    });
  }
  return hosts;
}

/**
 * The environment named `name`, created when missing, with the given hosts added (a host already in another
 * environment is 409 `runtime_host_in_other_environment`). Creation and each added host are audited.
 */
async function ensureEnvironment(
  deps: HubDeps,
  actor: Actor,
  workspace: Workspace,
  name: string,
  input: ProvisionTunnelInput,
): Promise<EnvironmentWithHosts> {
  const existing = await deps.db.runtimeEnvironment.findUnique({
    where: { workspaceId_name: { workspaceId: workspace.id, name } },
    include: ENVIRONMENT_WITH_HOSTS,
  });
  if (existing && !input.runtimeInstanceIds) return existing;
  const hosts = await chooseHosts(deps, workspace.id, input.runtimeInstanceIds);
  try {
    return await deps.db.$transaction(async (tx) => {
      let environment = existing;
      if (!environment) {
        environment = await tx.runtimeEnvironment.create({
          data: { id: newId('rte'), workspaceId: workspace.id, name },
          include: ENVIRONMENT_WITH_HOSTS,
        });
        await deps.audit.record(
          {
            workspaceId: workspace.id,
            actor,
            action: 'runtime_environment.created',
            targetType: 'runtime_environment',
            targetId: environment.id,
            data: { name, runtime_instance_ids: hosts.map((host) => host.id) },
            requestId: input.requestId,
          },
          tx,
        );
      }
      const envId = environment.id;
      for (const host of hosts) {
        const membership = await tx.runtimeEnvironmentHost.findUnique({
          where: { runtimeInstanceId: host.id },
        });
        if (membership && membership.environmentId !== envId) {
          throw new AppError({
            status: 409,
            code: 'runtime_host_in_other_environment',
            detail: `Runtime host '${host.id}' is already in another runtime environment.`,
            extra: { runtime_instance_id: host.id },
          });
        }
        if (!membership) {
          await tx.runtimeEnvironmentHost.create({
            data: { runtimeInstanceId: host.id, environmentId: envId },
          });
          if (existing) {
            await deps.audit.record(
              {
                workspaceId: workspace.id,
                actor,
                action: 'runtime_environment.host_added',
                targetType: 'runtime_environment',
                targetId: envId,
                data: { name, runtime_instance_id: host.id },
                requestId: input.requestId,
              },
              tx,
            );
          }
        }
      }
      return tx.runtimeEnvironment.findUniqueOrThrow({
        where: { id: envId },
        include: ENVIRONMENT_WITH_HOSTS,
      });
    });
  } catch (error) {
    // Two first provisionings of one name: the loser uses the winner's environment.
    if (isUniqueViolation(error)) return ensureEnvironment(deps, actor, workspace, name, input);
    throw error;
  }
}

/** The loopback ports the ingress forwards to: every host of the environment must use the same ones. */
function environmentHost(deps: HubDeps, environment: EnvironmentWithHosts) {
  const hosts = environment.hosts.map((membership) => membership.host);
  const [first] = hosts;
  if (!first) {
    throw new AppError({
      status: 409,
      code: 'runtime_environment_has_no_host',
      detail: 'This runtime environment has no runtime host; name one with runtime_instance_ids.',
    });
  }
  const differs = hosts.some(
    (host) =>
      host.consoleListenPort !== first.consoleListenPort || host.relayListenPort !== first.relayListenPort,
  );
  if (differs) {
    throw new AppError({
      status: 409,
      code: 'runtime_environment_ports_differ',
      detail:
        "The environment's hosts listen on different console router or relay ports; one ingress cannot reach them all.",
    });
  }
  return tunnelHostFacts(first, deps.now());
}

/**
 * Provisions the environment's tunnel with its provider: tunnel, ingress, DNS records and connector token,
 * all idempotent, so provisioning again changes nothing that is already right. The environment is created
 * first when it does not exist. A provider error leaves the tunnel `failed` with the provider's error kept,
 * audited, and answered as a typed problem.
 */
export async function provisionRuntimeEnvironmentTunnel(
  deps: HubDeps,
  actor: Actor,
  workspace: Workspace,
  name: string,
  input: ProvisionTunnelInput,
): Promise<{ environment: EnvironmentWithHosts; live: TunnelLiveState }> {
  const providerName = input.provider ?? deps.tunnels.defaultProvider;
  const provider = deps.tunnels.get(providerName);
  const environment = await ensureEnvironment(deps, actor, workspace, name, input);
  const current = environment.tunnelProvider;
  if (current && current !== 'external' && current !== providerName && environment.tunnelState !== 'none') {
    throw new AppError({
      status: 409,
      code: 'tunnel_provider_change',
      detail: `This environment's tunnel is provided by ${current}; delete it before provisioning with ${providerName}.`,
      extra: { provider: current },
    });
  }
  const host = environmentHost(deps, environment);
  await beginTunnelOperation(deps, environment.id, 'provisioning');

  let provisioned;
  try {
    provisioned = await provider.provision({
      environmentId: environment.id,
      workspaceId: workspace.id,
      workspaceSlug: workspace.slug,
      environmentName: environment.name,
      knownTunnelId: current === providerName ? environment.tunnelId : null,
      knownDnsRecords: current === providerName ? storedDnsRecords(environment.dnsRecords) : [],
      host,
    });
  } catch (error) {
    const lastError = await recordTunnelFailure(deps, {
      operation: 'provision',
      environment,
      workspaceId: workspace.id,
      actor,
      requestId: input.requestId,
      providerName,
      error,
    });
    deps.logger.warn(
      { runtime_environment: environment.id, provider: providerName, code: lastError.code },
      'tunnel provisioning failed',
    );
    throw error;
  }

  const now = deps.now();
  const saved = await deps.db.$transaction(async (tx) => {
    const updated = await tx.runtimeEnvironment.update({
      where: { id: environment.id },
      data: {
        tunnelProvider: providerName,
        tunnelState: 'active',
        tunnelId: provisioned.tunnelId,
        tunnelName: provisioned.tunnelName,
        consoleHostname: provisioned.consoleHostname,
        relayHostname: provisioned.relayHostname,
        consolePublicBaseUrl: provisioned.consolePublicBaseUrl,
        relayPublicBaseUrl: provisioned.relayPublicBaseUrl,
        connectorTokenCiphertext:
          provisioned.connectorToken === null
            ? null
            : deps.box.seal(provisioned.connectorToken, environment.id),
        dnsRecords: provisioned.dnsRecords as object[],
        ingress: provisioned.ingress === null ? Prisma.DbNull : (provisioned.ingress as object[]),
        lastError: Prisma.DbNull,
        operationStartedAt: null,
        provisionedAt: now,
      },
      include: ENVIRONMENT_WITH_HOSTS,
    });
    await deps.audit.record(
      {
        workspaceId: workspace.id,
        actor,
        action: 'tunnel.provisioned',
        targetType: 'runtime_environment',
        targetId: environment.id,
        data: {
          name: environment.name,
          provider: providerName,
          tunnel_id: provisioned.tunnelId,
          console_hostname: provisioned.consoleHostname,
          relay_hostname: provisioned.relayHostname,
          dns_record_ids: provisioned.dnsRecords.map((record) => record.id),
        },
        requestId: input.requestId,
      },
      tx,
    );
    return updated;
  });
  deps.logger.info(
    { runtime_environment: environment.id, provider: providerName, tunnel_id: provisioned.tunnelId },
    'tunnel provisioned',
  );
  return { environment: saved, live: provisioned.live };
}
