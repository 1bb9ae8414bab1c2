import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { Pool } from 'pg';
import type { Db } from '../db';
import { AGENT_HEARTBEAT_FRESH_SECONDS, RUNNING_AGENT_STATUSES } from '../domain/host-readiness';
import type { ReadinessHost } from '../domain/runtime-readiness';
import { assertInventoryId } from '../domain/runtime-instance-id';
import type { RuntimeHost } from '../generated/prisma/client';
import { canSeeWorkspace } from './workspaces.access';

export const runtimeHostNotFound = (hostId: string) =>
  new AppError({ status: 404, code: 'runtime_host_not_found', detail: `No runtime host '${hostId}'.` });

/**
 * Checks a `runtime_instance_id`: it must be the inventory id (`rti_…`) of a runtime host of this
 * workspace. A runtime bundle id (`wrt_…`, from runtime.env) is refused with a message naming the id to use.
 */
export async function resolveRuntimeInstanceId(
  db: Db,
  workspaceId: string,
  value: string,
  field = 'runtime_instance_id',
): Promise<RuntimeHost> {
  assertInventoryId(value, field);
  const host = await db.runtimeHost.findFirst({ where: { id: value, workspaceId } });
  if (!host) {
    throw new AppError({
      status: 400,
      code: 'runtime_host_not_found',
      detail: `No runtime host '${value}' in this workspace; register the host first and use its inventory id.`,
      extra: { field },
    });
  }
  return host;
}

/**
 * A runtime host addressed by its inventory id that the actor can see; a host of another workspace (or a
 * missing one) is reported as not found. A runtime bundle id (`wrt_…`) is never a host id and is refused
 * with `runtime_bundle_id_not_allowed`, which says which id to use (and reveals nothing about any host).
 */
export async function findRuntimeHostFor(
  db: Db,
  actor: Actor | undefined,
  hostId: string,
): Promise<RuntimeHost> {
  // Refuses every bundle id before looking anything up.
  if (hostId.startsWith('wrt_')) assertInventoryId(hostId, 'hostId');
  const host = await db.runtimeHost.findUnique({ where: { id: hostId } });
  if (!host || !(await canSeeWorkspace(db, actor, host.workspaceId))) throw runtimeHostNotFound(hostId);
  return host;
}

/** Bundle ids (`wrt_…`) each host has reported, most recently seen first. */
export async function bundlesByHost(db: Db, hostIds: readonly string[]): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>(hostIds.map((id) => [id, []]));
  if (hostIds.length === 0) return result;
  const bundles = await db.runtimeBundle.findMany({
    where: { runtimeInstanceId: { in: [...hostIds] } },
    orderBy: [{ lastSeenAt: 'desc' }, { id: 'asc' }],
    select: { id: true, runtimeInstanceId: true },
  });
  for (const bundle of bundles) {
    if (bundle.runtimeInstanceId) result.get(bundle.runtimeInstanceId)?.push(bundle.id);
  }
  return result;
}

/**
 * The hosts of a workspace (only `hostIds` when given) with the readiness facts of each and how many of its
 * agents are running, in ONE named prepared statement on the pool (decision 97). "Running" is the rule of
 * `runningAgentFilter`, with the cutoff computed from `now` as there.
 */
const READ_READINESS_HOSTS = {
  name: 'hub_readiness_hosts',
  text: `
    SELECT h.id, h.name, h.hostname, h.last_heartbeat_at, h.relay_ready, h.console_router_ready, h.relay_detail,
      h.console_router_detail, h.runtime_api_key_id, h.runtime_key_rotated_at, h.runtime_key_rotated_by,
      h.previous_runtime_api_key_id, h.previous_runtime_key_valid_until, h.heartbeat_api_key_id,
      h.heartbeat_key_revoked_at, h.drain_requested_at,
      (SELECT count(*) FROM agents a
        WHERE a.workspace_id = h.workspace_id AND a.runtime_instance_id = h.id
          AND a.status::text = ANY($3::text[]) AND a.last_heartbeat_at > $4::timestamptz)::int AS running_agents
    FROM runtime_hosts h
    WHERE h.workspace_id = $1 AND ($2::text[] IS NULL OR h.id = ANY($2::text[]))`,
};

interface ReadinessHostRow {
  id: string;
  name: string;
  hostname: string | null;
  last_heartbeat_at: Date | null;
  relay_ready: boolean;
  console_router_ready: boolean;
  relay_detail: string | null;
  console_router_detail: string | null;
  runtime_api_key_id: string | null;
  runtime_key_rotated_at: Date | null;
  runtime_key_rotated_by: string | null;
  previous_runtime_api_key_id: string | null;
  previous_runtime_key_valid_until: Date | null;
  heartbeat_api_key_id: string | null;
  heartbeat_key_revoked_at: Date | null;
  drain_requested_at: Date | null;
  running_agents: number;
}

export async function readReadinessHosts(
  pool: Pool,
  now: Date,
  workspaceId: string,
  hostIds?: readonly string[],
): Promise<Array<{ host: ReadinessHost; runningAgents: number }>> {
  const cutoff = new Date(now.getTime() - AGENT_HEARTBEAT_FRESH_SECONDS * 1000);
  const { rows } = await pool.query<ReadinessHostRow>({
    ...READ_READINESS_HOSTS,
    values: [workspaceId, hostIds ? [...hostIds] : null, [...RUNNING_AGENT_STATUSES], cutoff.toISOString()],
  });
  return rows.map((row) => ({
    host: {
      id: row.id,
      name: row.name,
      hostname: row.hostname,
      lastHeartbeatAt: row.last_heartbeat_at,
      relayReady: row.relay_ready,
      consoleRouterReady: row.console_router_ready,
      relayDetail: row.relay_detail,
      consoleRouterDetail: row.console_router_detail,
      runtimeApiKeyId: row.runtime_api_key_id,
      runtimeKeyRotatedAt: row.runtime_key_rotated_at,
      runtimeKeyRotatedBy: row.runtime_key_rotated_by,
      previousRuntimeApiKeyId: row.previous_runtime_api_key_id,
      previousRuntimeKeyValidUntil: row.previous_runtime_key_valid_until,
      heartbeatApiKeyId: row.heartbeat_api_key_id,
      heartbeatKeyRevokedAt: row.heartbeat_key_revoked_at,
      drainRequestedAt: row.drain_requested_at,
    },
    runningAgents: row.running_agents,
  }));
}
