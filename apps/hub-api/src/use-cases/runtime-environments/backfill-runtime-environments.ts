import { newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { isUniqueViolation } from '../../db';
import type { RuntimeHost } from '../../generated/prisma/client';

export interface BackfillSummary {
  /** Environments materialized by this run, with the host each came from. */
  created: Array<{ workspace_id: string; name: string; runtime_instance_id: string }>;
  /** Hosts in an environment after the run (those created by it included). */
  placed: number;
  /** Hosts without an environment left alone because a concurrent run placed them first. */
  skipped: number;
}

const NAME_LENGTH = 24;

/** An environment name from a host name: lower-case letters, digits and inner dashes, at most 24 characters. */
export function environmentNameFor(hostName: string): string {
  const cleaned = hostName
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .slice(0, NAME_LENGTH)
    .replace(/^-+|-+$/g, '');
  return cleaned || 'host';
}

function hostnameOf(url: string | null): string | null {
  if (!url) return null;
  try {
    return new URL(url).hostname;
  } catch {
    return null;
  }
}

async function backfillHost(
  deps: Pick<HubDeps, 'db' | 'audit'>,
  host: RuntimeHost,
): Promise<BackfillSummary['created'][number] | null> {
  return deps.db.$transaction(async (tx) => {
    // Locked so a concurrent run waits here and then sees the membership this run wrote.
    await tx.$queryRaw`SELECT id FROM runtime_hosts WHERE id = ${host.id} FOR UPDATE`;
    if (await tx.runtimeEnvironmentHost.findUnique({ where: { runtimeInstanceId: host.id } })) return null;
    const base = environmentNameFor(host.name);
    const taken = new Set(
      (
        await tx.runtimeEnvironment.findMany({
          where: { workspaceId: host.workspaceId, name: { startsWith: base.slice(0, NAME_LENGTH - 4) } },
          select: { name: true },
        })
      ).map((row) => row.name),
    );
    let name = base;
    for (let n = 2; taken.has(name); n += 1) name = `${base.slice(0, NAME_LENGTH - `-${n}`.length)}-${n}`;
    const environment = await tx.runtimeEnvironment.create({
      data: {
        id: newId('rte'),
        workspaceId: host.workspaceId,
        name,
        tunnelProvider: 'external',
        tunnelState: 'active',
        consoleHostname: hostnameOf(host.consolePublicBaseUrl),
        relayHostname: hostnameOf(host.relayPublicUrl),
        consolePublicBaseUrl: host.consolePublicBaseUrl,
        relayPublicBaseUrl: host.relayPublicUrl,
        backfilledFromHostId: host.id,
      },
    });
    await tx.runtimeEnvironmentHost.create({
      data: { runtimeInstanceId: host.id, environmentId: environment.id },
    });
    await deps.audit.record(
      {
        workspaceId: host.workspaceId,
        action: 'runtime_environment.backfilled',
        targetType: 'runtime_environment',
        targetId: environment.id,
        data: {
          name,
          runtime_instance_id: host.id,
          console_public_base_url: host.consolePublicBaseUrl,
          relay_public_url: host.relayPublicUrl,
        },
      },
      tx,
    );
    return { workspace_id: host.workspaceId, name, runtime_instance_id: host.id };
  });
}

/** The migration that introduced runtime environments; hosts registered after it are not backfilled. */
export const RUNTIME_ENVIRONMENTS_MIGRATION = '20261124100000_runtime_environments';

/**
 * When runtime environments came to this database: the end of their migration. Hosts that existed before are
 * the "existing workspace tunnels" the backfill materializes; later hosts get an environment when a tunnel is
 * provisioned for them, so a restart of the hub never changes what a host has. Now, when the bookkeeping row is
 * missing (a database migrated by other means).
 */
async function environmentsIntroducedAt(deps: Pick<HubDeps, 'db'>): Promise<Date> {
  const rows = await deps.db.$queryRaw<Array<{ finished_at: Date | null }>>`
    SELECT finished_at FROM _prisma_migrations
    WHERE migration_name = ${RUNTIME_ENVIRONMENTS_MIGRATION} AND rolled_back_at IS NULL
    ORDER BY finished_at DESC NULLS LAST LIMIT 1`;
  return rows[0]?.finished_at ?? new Date();
}

/** A concurrent run may take the same name for another host of the workspace first: then pick again. */
async function backfillHostRetrying(deps: Pick<HubDeps, 'db' | 'audit'>, host: RuntimeHost) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await backfillHost(deps, host);
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 5) throw error;
    }
  }
}

/**
 * Materializes runtime environments from the public URLs the workspaces' hosts already had when runtime
 * environments were introduced: every such host in no environment gets one of its own (named after the host, tunnel `external` and `active`, the host's URLs as
 * its public URLs). Idempotent: only hosts in no environment are read, so a second run reads nothing and
 * changes nothing, and concurrent runs wait on the host row. Hosts are visited in pages, by id.
 */
export async function backfillRuntimeEnvironments(
  deps: Pick<HubDeps, 'db' | 'audit'>,
  options: { pageSize?: number } = {},
): Promise<BackfillSummary> {
  const summary: BackfillSummary = { created: [], placed: 0, skipped: 0 };
  const cutoff = await environmentsIntroducedAt(deps);
  const pageSize = options.pageSize ?? 200;
  let after: string | undefined;
  for (;;) {
    const hosts = await deps.db.runtimeHost.findMany({
      where: {
        environment: { is: null },
        createdAt: { lte: cutoff },
        ...(after === undefined ? {} : { id: { gt: after } }),
      },
      orderBy: { id: 'asc' },
      take: pageSize,
    });
    if (hosts.length === 0) break;
    for (const host of hosts) {
      const created = await backfillHostRetrying(deps, host);
      if (created) summary.created.push(created);
      else summary.skipped += 1;
    }
    after = hosts[hosts.length - 1]!.id;
  }
  summary.placed = await deps.db.runtimeEnvironmentHost.count();
  return summary;
}
