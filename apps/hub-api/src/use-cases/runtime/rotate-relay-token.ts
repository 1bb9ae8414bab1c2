import type { ParticipantActor } from '@svc/auth';
import { generateOpaqueToken, hashOpaqueToken } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import { assertWorkspaceAccess } from '../../data/workspaces.access';
import { RELAY_TOKEN_ROTATOR_ROLES } from '../../domain/roles';

/**
 * Replaces a host's relay token: the stored hash and sealed copy are overwritten, so the old token stops
 * working at once. The new token is returned once.
 */
export async function rotateRelayToken(
  deps: HubDeps,
  actor: ParticipantActor,
  hostId: string,
  requestId?: string,
): Promise<{ relayToken: string; rotatedAt: Date }> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const workspace = await deps.db.workspace.findUnique({ where: { id: host.workspaceId } });
  await assertWorkspaceAccess(deps.db, actor, workspace, host.workspaceId, RELAY_TOKEN_ROTATOR_ROLES);

  const relayToken = generateOpaqueToken('rly');
  const rotatedAt = deps.now();
  await deps.db.$transaction(async (tx) => {
    await tx.runtimeHost.update({
      where: { id: host.id },
      data: {
        relayTokenHash: hashOpaqueToken(relayToken),
        relayTokenCiphertext: deps.box.seal(relayToken, host.id),
        relayTokenRotatedAt: rotatedAt,
      },
    });
    await deps.audit.record(
      {
        workspaceId: host.workspaceId,
        actor,
        action: 'credential.relay_token.rotated',
        targetType: 'runtime_host',
        targetId: host.id,
        data: { runtime_instance_id: host.id, rotated_at: rotatedAt.toISOString() },
        requestId,
      },
      tx,
    );
  });
  return { relayToken, rotatedAt };
}
