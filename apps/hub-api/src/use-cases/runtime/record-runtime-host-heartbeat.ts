import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { bundlesByHost, findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import { consoleActivityUpdate } from '../../domain/console-activity';
import { environmentsOfHosts, recordConnectorReadiness } from '../../data/runtime-environments.lookups';
import type { HostEnvironment } from '../../data/runtime-environments.lookups';
import type { ConsoleRouteActivityReport } from '../../domain/console-activity';
import type { RuntimeHostWithBundles } from './get-runtime-host';
import { runningAgentFilter } from '../../domain/host-readiness';
import type { Prisma, RuntimeHost } from '../../generated/prisma/client';

/**
 * A draining host whose agents all stopped is drained: recorded once, with its audit event. The runtime reports
 * with every heartbeat, so the state follows within a beat of the last agent's stop.
 */
async function finishDrain(
  deps: HubDeps,
  actor: Actor,
  tx: Prisma.TransactionClient,
  host: RuntimeHost,
  now: Date,
): Promise<RuntimeHost> {
  if (!host.drainRequestedAt || host.drainedAt) return host;
  const running = await tx.agent.count({ where: { runtimeInstanceId: host.id, ...runningAgentFilter(now) } });
  if (running > 0) return host;
  const drained = await tx.runtimeHost.update({ where: { id: host.id }, data: { drainedAt: now } });
  await deps.audit.record(
    {
      workspaceId: host.workspaceId,
      actor,
      action: 'runtime_host.drained',
      targetType: 'runtime_host',
      targetId: host.id,
      data: { runtime_instance_id: host.id, drain_requested_at: host.drainRequestedAt.toISOString() },
    },
    tx,
  );
  return drained;
}

export interface RuntimeHostHeartbeat {
  relayReady: boolean;
  consoleRouterReady: boolean;
  runtimeVersion: string;
  /** The runtime bundle id (`wrt_…`) from the host's runtime.env; recorded against the host, never its id. */
  bundleId?: string;
  /** The console router's per-route last activity; absent leaves every agent's value as it is. */
  consoleRoutes?: ConsoleRouteActivityReport[];
  /** The tunnel connector's readiness, when the host runs one. */
  tunnelConnectorReady?: boolean;
  /** Why the relay / console router is not ready, as they said (redacted by the host). */
  relayDetail?: string;
  consoleRouterDetail?: string;
}

/**
 * A host says it is alive: its readiness and `last_heartbeat_at` are updated, and the bundle it runs is
 * recorded (a bundle reported by another host of the workspace moves to the reporting host). The console
 * router's per-route last activity is stored on the host's own agents (ids of other hosts' or workspaces'
 * agents, and unknown ids, are ignored), never moved backwards, in one statement for the whole list.
 * The key the heartbeat came with is recorded, so the answer (and the Networks view) can say whether it is
 * the host's current runtime key or one a rotation superseded. Heartbeats are frequent, so they are not audited. Returns the updated host with the bundles it has reported
 * and its runtime environment (null when it is in none), whose tunnel the runtime's connector follows.
 */
export async function recordRuntimeHostHeartbeat(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  heartbeat: RuntimeHostHeartbeat,
): Promise<RuntimeHostWithBundles & { environment: HostEnvironment | null }> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const now = deps.now();
  const saved = await deps.db.$transaction(async (tx) => {
    const updated = await tx.runtimeHost.update({
      where: { id: host.id },
      data: {
        relayReady: heartbeat.relayReady,
        consoleRouterReady: heartbeat.consoleRouterReady,
        runtimeVersion: heartbeat.runtimeVersion,
        lastHeartbeatAt: now,
        relayDetail: heartbeat.relayReady ? null : (heartbeat.relayDetail ?? null),
        consoleRouterDetail: heartbeat.consoleRouterReady ? null : (heartbeat.consoleRouterDetail ?? null),
        // The key this heartbeat came with works, so it is not revoked (whatever a revocation noted before).
        heartbeatApiKeyId: actor.kind === 'api_key' ? actor.keyId : null,
        heartbeatKeyRevokedAt: null,
        // A host the presence sweep marked lost is back (its agents come back with their own heartbeats).
        lostAt: null,
      },
    });
    if (host.lostAt) {
      await deps.audit.record(
        {
          workspaceId: host.workspaceId,
          actor,
          action: 'runtime_host.returned',
          targetType: 'runtime_host',
          targetId: host.id,
          data: { lost_at: host.lostAt.toISOString() },
        },
        tx,
      );
    }
    const drained = await finishDrain(deps, actor, tx, updated, now);
    if (heartbeat.bundleId !== undefined) {
      const bundle = await tx.runtimeBundle.findUnique({ where: { id: heartbeat.bundleId } });
      if (bundle && bundle.workspaceId !== host.workspaceId) {
        throw new AppError({
          status: 409,
          code: 'runtime_bundle_conflict',
          detail: `Runtime bundle '${heartbeat.bundleId}' belongs to another workspace; check the host's runtime.env.`,
        });
      }
      await tx.runtimeBundle.upsert({
        where: { id: heartbeat.bundleId },
        create: {
          id: heartbeat.bundleId,
          workspaceId: host.workspaceId,
          runtimeInstanceId: host.id,
          version: heartbeat.runtimeVersion,
          firstSeenAt: now,
          lastSeenAt: now,
        },
        update: { runtimeInstanceId: host.id, version: heartbeat.runtimeVersion, lastSeenAt: now },
      });
    }
    if (heartbeat.tunnelConnectorReady !== undefined) {
      await recordConnectorReadiness(tx, host.id, heartbeat.tunnelConnectorReady, now);
    }
    if (heartbeat.consoleRoutes !== undefined) {
      const { agentIds, times } = consoleActivityUpdate(heartbeat.consoleRoutes, now);
      if (agentIds.length > 0) {
        const isoTimes = times.map((time) => time.toISOString());
        // Only rows that move forward are written; updated_at is left alone (activity is not an edit).
        await tx.$executeRaw`
          UPDATE agents AS a
          SET console_last_activity_at = r.at
          FROM unnest(${agentIds}::text[], ${isoTimes}::timestamptz[]) AS r(id, at)
          WHERE a.id = r.id
            AND a.workspace_id = ${host.workspaceId}
            AND a.runtime_instance_id = ${host.id}
            AND (a.console_last_activity_at IS NULL OR a.console_last_activity_at < r.at)`;
      }
    }
    return drained;
  });
  const [bundles, environments] = await Promise.all([
    bundlesByHost(deps.db, [saved.id]),
    environmentsOfHosts(deps.db, [saved.id]),
  ]);
  return {
    host: saved,
    bundles: bundles.get(saved.id) ?? [],
    environment: environments.get(saved.id) ?? null,
  };
}
