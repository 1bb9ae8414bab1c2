import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findRuntimeHostFor } from '../../data/runtime-hosts.lookups';

export interface RelaySpawnEventInput {
  spawnId: string;
  event: 'requested' | 'started' | 'failed';
  agentName: string;
  agentId?: string;
  code?: string;
  detail?: string;
  requestId?: string;
}

/**
 * A host's relay reports a spawn it ran: recorded as the audit event `relay.spawn.<event>` of the host's
 * workspace, with the spawn id (the detail is redacted again by the audit recorder). The host must be one
 * the key's workspace owns; another's is not found.
 */
export async function recordRelaySpawnEvent(
  deps: HubDeps,
  actor: Actor,
  hostId: string,
  input: RelaySpawnEventInput,
): Promise<{ runtimeInstanceId: string }> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  await deps.audit.record({
    workspaceId: host.workspaceId,
    actor,
    action: `relay.spawn.${input.event}`,
    targetType: 'agent_spawn',
    targetId: input.spawnId,
    data: {
      spawn_id: input.spawnId,
      runtime_instance_id: host.id,
      agent_name: input.agentName,
      agent_id: input.agentId ?? null,
      code: input.code ?? null,
      detail: input.detail ?? null,
    },
    requestId: input.requestId,
  });
  return { runtimeInstanceId: host.id };
}
