import type { ParticipantActor } from '@svc/auth';
import { generateApiKey, SCOPE_PRESETS } from '@svc/auth';
import { newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Workspace } from '../../generated/prisma/client';
import { environmentsOfHosts } from '../../data/runtime-environments.lookups';
import { runtimeKeysOf, selectHost } from './pull-runtime-config';
import type { PulledRuntimeConfig } from './pull-runtime-config';

/** How long a superseded runtime key stays valid when the rotation does not say. */
export const DEFAULT_RUNTIME_KEY_OVERLAP_SECONDS = 24 * 60 * 60;

/** Name of the agent-runtime key a rotation mints for a host. */
export const runtimeKeyName = (host: { name: string }) => `runtime ${host.name}`;

export interface RotateRuntimeKeyInput {
  actor: ParticipantActor;
  workspace: Workspace;
  runtimeInstanceId?: string;
  /** How long the previous key stays valid; 0 revokes it at once. */
  overlapSeconds?: number;
  requestId?: string;
}

/**
 * Issues a new agent-runtime key for a host. The host's current key becomes its previous key and stays valid
 * for the overlap window (its expiry is set to the end of it), or is revoked at once when the window is 0; a
 * key an earlier rotation kept valid is revoked now, so a host never has more than two live runtime keys. The
 * host row is locked, so concurrent rotations serialize. Audited as `runtime_key.rotated` with both key ids
 * (and `api_key.created` / `api_key.revoked` for the keys), never a secret. Returns the runtime config with
 * the new key, shown this once.
 */
export async function rotateRuntimeKey(
  deps: HubDeps,
  input: RotateRuntimeKeyInput,
): Promise<PulledRuntimeConfig & { revokedKeyIds: string[] }> {
  const { actor, workspace } = input;
  const selected = await selectHost(deps, workspace.id, input.runtimeInstanceId);
  const overlapSeconds = input.overlapSeconds ?? DEFAULT_RUNTIME_KEY_OVERLAP_SECONDS;
  const generated = generateApiKey();
  const scopes = [...SCOPE_PRESETS['agent-runtime']];
  const now = deps.now();
  const validUntil = new Date(now.getTime() + overlapSeconds * 1000);

  const result = await deps.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM runtime_hosts WHERE id = ${selected.id} FOR UPDATE`;
    const host = await tx.runtimeHost.findUniqueOrThrow({ where: { id: selected.id } });
    const key = await tx.apiKey.create({
      data: {
        id: newId('key'),
        workspaceId: host.workspaceId,
        name: runtimeKeyName(host),
        prefix: generated.prefix,
        secretHash: generated.secretHash,
        scopes,
        preset: 'agent-runtime',
        createdById: actor.participantId,
      },
    });
    await deps.audit.record(
      {
        workspaceId: host.workspaceId,
        actor,
        action: 'api_key.created',
        targetType: 'api_key',
        targetId: key.id,
        data: {
          name: key.name,
          prefix: key.prefix,
          scopes,
          preset: key.preset,
          expires_at: null,
          reason: 'runtime_key_rotation',
          runtime_instance_id: host.id,
        },
        requestId: input.requestId,
      },
      tx,
    );

    const revokedKeyIds: string[] = [];
    const revoke = async (keyId: string) => {
      const revoked = await tx.apiKey.updateMany({
        where: { id: keyId, workspaceId: host.workspaceId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (revoked.count === 0) return;
      revokedKeyIds.push(keyId);
      const row = await tx.apiKey.findUniqueOrThrow({ where: { id: keyId }, select: { prefix: true } });
      await deps.audit.record(
        {
          workspaceId: host.workspaceId,
          actor,
          action: 'api_key.revoked',
          targetType: 'api_key',
          targetId: keyId,
          data: { prefix: row.prefix, reason: 'runtime_key_rotation', runtime_instance_id: host.id },
          requestId: input.requestId,
        },
        tx,
      );
    };
    // The key an earlier rotation kept valid goes now: at most two live runtime keys per host.
    if (host.previousRuntimeApiKeyId && host.previousRuntimeApiKeyId !== host.runtimeApiKeyId) {
      await revoke(host.previousRuntimeApiKeyId);
    }
    let previousKeyId: string | null = null;
    if (host.runtimeApiKeyId) {
      if (overlapSeconds === 0) {
        await revoke(host.runtimeApiKeyId);
        previousKeyId = host.runtimeApiKeyId;
      } else {
        const kept = await tx.apiKey.updateMany({
          where: { id: host.runtimeApiKeyId, workspaceId: host.workspaceId, revokedAt: null },
          data: { expiresAt: validUntil },
        });
        if (kept.count > 0) previousKeyId = host.runtimeApiKeyId;
      }
    }
    if (revokedKeyIds.length > 0) {
      // A host whose heartbeats used a key revoked here is shown with its key revoked.
      await tx.runtimeHost.updateMany({
        where: { workspaceId: host.workspaceId, heartbeatApiKeyId: { in: revokedKeyIds } },
        data: { heartbeatKeyRevokedAt: now },
      });
    }
    const updated = await tx.runtimeHost.update({
      where: { id: host.id },
      data: {
        runtimeApiKeyId: key.id,
        previousRuntimeApiKeyId: previousKeyId,
        previousRuntimeKeyValidUntil: previousKeyId ? (overlapSeconds === 0 ? now : validUntil) : null,
        runtimeKeyRotatedAt: now,
        runtimeKeyRotatedBy: actor.email,
      },
    });
    await deps.audit.record(
      {
        workspaceId: host.workspaceId,
        actor,
        action: 'runtime_key.rotated',
        targetType: 'runtime_host',
        targetId: host.id,
        data: {
          runtime_instance_id: host.id,
          api_key_id: key.id,
          previous_api_key_id: previousKeyId,
          previous_valid_until: previousKeyId
            ? (overlapSeconds === 0 ? now : validUntil).toISOString()
            : null,
          overlap_seconds: overlapSeconds,
          revoked_api_key_ids: revokedKeyIds,
        },
        requestId: input.requestId,
      },
      tx,
    );
    return { host: updated, fullKey: generated.key, revokedKeyIds, previousKeyId };
  });
  // Committed: this replica forgets the revoked keys and reads the previous key's new expiry at once, and
  // the other replicas and services are told of each revocation.
  for (const keyId of result.revokedKeyIds) deps.apiKeys.invalidate(keyId);
  if (result.previousKeyId) deps.apiKeys.invalidate(result.previousKeyId);
  for (const keyId of result.revokedKeyIds) {
    await deps.notices.publish({ kind: 'api_key_revoked', key_id: keyId, workspace_id: workspace.id });
  }
  deps.logger.info(
    {
      runtime_instance_id: result.host.id,
      api_key_id: result.host.runtimeApiKeyId,
      previous_api_key_id: result.previousKeyId,
      overlap_seconds: overlapSeconds,
    },
    'runtime key rotated',
  );
  const [environments, runtimeKeys] = await Promise.all([
    environmentsOfHosts(deps.db, [result.host.id]),
    runtimeKeysOf(deps, result.host),
  ]);
  return {
    host: result.host,
    relayToken: deps.box.open(result.host.relayTokenCiphertext, result.host.id),
    workspaceApiKey: result.fullKey,
    runtimeKeys,
    environment: environments.get(result.host.id) ?? null,
    revokedKeyIds: result.revokedKeyIds,
  };
}
