import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
import { hostReadiness } from '../domain/host-readiness';
import type { Prisma, RuntimeEnvironment, RuntimeHost } from '../generated/prisma/client';
import type { TunnelDnsRecord, TunnelHostFacts } from './tunnel-providers/tunnel-provider';

/** An environment with its hosts, as every use case of this folder reads it. */
export const ENVIRONMENT_WITH_HOSTS = {
  hosts: { include: { host: true }, orderBy: { runtimeInstanceId: 'asc' } },
} satisfies Prisma.RuntimeEnvironmentInclude;

export type EnvironmentWithHosts = Prisma.RuntimeEnvironmentGetPayload<{
  include: typeof ENVIRONMENT_WITH_HOSTS;
}>;

export const runtimeEnvironmentNotFound = (name: string) =>
  new AppError({
    status: 404,
    code: 'runtime_environment_not_found',
    detail: `No runtime environment '${name}' in this workspace.`,
  });

export async function findRuntimeEnvironment(
  db: Db,
  workspaceId: string,
  name: string,
): Promise<EnvironmentWithHosts> {
  const environment = await db.runtimeEnvironment.findUnique({
    where: { workspaceId_name: { workspaceId, name } },
    include: ENVIRONMENT_WITH_HOSTS,
  });
  if (!environment) throw runtimeEnvironmentNotFound(name);
  return environment;
}

/** What a provider needs of a host: its loopback ports and whether its console router is up. */
export function tunnelHostFacts(host: RuntimeHost, now: Date): TunnelHostFacts {
  const readiness = hostReadiness(host, now);
  return {
    consoleListenPort: host.consoleListenPort,
    relayListenPort: host.relayListenPort,
    ready: readiness.heartbeat_fresh && readiness.console_router_ready,
  };
}

/** The DNS records stored on an environment (a JSON column). */
export function storedDnsRecords(value: Prisma.JsonValue): TunnelDnsRecord[] {
  return Array.isArray(value) ? (value as unknown as TunnelDnsRecord[]) : [];
}

/** A host's runtime environment and its tunnel connector's last reported readiness. */
export interface HostEnvironment {
  environment: RuntimeEnvironment;
  connectorReady: boolean | null;
}

/** The environment and connector readiness of each given host that is in an environment. */
export async function environmentsOfHosts(
  db: Db,
  hostIds: readonly string[],
): Promise<Map<string, HostEnvironment>> {
  const result = new Map<string, HostEnvironment>();
  if (hostIds.length === 0) return result;
  const rows = await db.runtimeEnvironmentHost.findMany({
    where: { runtimeInstanceId: { in: [...hostIds] } },
    include: { environment: true },
  });
  for (const row of rows) {
    result.set(row.runtimeInstanceId, { environment: row.environment, connectorReady: row.connectorReady });
  }
  return result;
}

/**
 * Records the tunnel connector's readiness a host reported with its heartbeat (a host in no environment has
 * nothing to record).
 */
export async function recordConnectorReadiness(
  tx: Pick<Db, 'runtimeEnvironmentHost'>,
  hostId: string,
  ready: boolean,
  now: Date,
): Promise<void> {
  await tx.runtimeEnvironmentHost.updateMany({
    where: { runtimeInstanceId: hostId },
    data: { connectorReady: ready, connectorCheckedAt: now },
  });
}
