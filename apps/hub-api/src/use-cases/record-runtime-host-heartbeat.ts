import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import type { RuntimeHost } from '../generated/prisma/client';
import { getRuntimeHost } from './get-runtime-host';

export interface RuntimeHostHeartbeat {
  relayReady: boolean;
  consoleRouterReady: boolean;
  runtimeVersion: string;
  /** The runtime bundle id (`wrt_…`) from the host's runtime.env; recorded against the host, never its id. */
  bundleId?: string;
}

/**
 * A host says it is alive: its readiness and `last_heartbeat_at` are updated, and the bundle it runs is
 * recorded (a bundle reported by another host of the workspace moves to the reporting host). Heartbeats
 * are frequent, so they are not audited.
 */
export async function recordRuntimeHostHeartbeat(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  heartbeat: RuntimeHostHeartbeat,
): Promise<RuntimeHost> {
  const host = await getRuntimeHost(deps, actor, hostId);
  const now = deps.now();
  return deps.db.$transaction(async (tx) => {
    const updated = await tx.runtimeHost.update({
      where: { id: host.id },
      data: {
        relayReady: heartbeat.relayReady,
        consoleRouterReady: heartbeat.consoleRouterReady,
        runtimeVersion: heartbeat.runtimeVersion,
        lastHeartbeatAt: now,
      },
    });
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
    return updated;
  });
}
