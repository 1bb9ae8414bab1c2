import type { Actor, ParticipantActor } from '@svc/auth';
import { generateApiKey, parseApiKey, SCOPE_PRESETS } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { RuntimeHost, Workspace } from '../../generated/prisma/client';
import { resolveRuntimeInstanceId } from '../../data/runtime-hosts.lookups';
import { environmentsOfHosts } from '../../data/runtime-environments.lookups';
import type { HostEnvironment } from '../../data/runtime-environments.lookups';

export interface PullRuntimeConfigInput {
  actor: Actor;
  workspace: Workspace;
  /** Inventory id of the host; may be left out when the workspace has exactly one host. */
  runtimeInstanceId?: string;
  /** The `x-api-key` the caller authenticated with, when the caller is an API key. */
  presentedApiKey?: string;
  requestId?: string;
}

export interface PulledRuntimeConfig {
  host: RuntimeHost;
  relayToken: string;
  workspaceApiKey: string;
  /** Id of the key handed out (minted or presented). */
  apiKeyId: string;
  minted: boolean;
  /** The host's runtime environment, whose active tunnel gives its public URLs. */
  environment: HostEnvironment | null;
}

/** Name of the agent-runtime key a participant's pull mints for a host. */
export const runtimeKeyName = (host: Pick<RuntimeHost, 'name'>) => `runtime ${host.name}`;

async function selectHost(deps: HubDeps, workspaceId: string, runtimeInstanceId: string | undefined) {
  if (runtimeInstanceId !== undefined) {
    return resolveRuntimeInstanceId(deps.db, workspaceId, runtimeInstanceId);
  }
  const hosts = await deps.db.runtimeHost.findMany({
    where: { workspaceId },
    orderBy: { id: 'asc' },
    take: 11,
  });
  const [only] = hosts;
  if (!only) {
    throw new AppError({
      status: 404,
      code: 'no_runtime_host',
      detail:
        'This workspace has no runtime host. Register one first (POST /api/v1/workspaces/{workspace}/runtime-hosts), then pull its runtime config.',
    });
  }
  if (hosts.length > 1) {
    throw new AppError({
      status: 400,
      code: 'runtime_instance_id_required',
      detail:
        'This workspace has several runtime hosts; name one with runtime_instance_id (its inventory id, rti_…, from the Networks view).',
      extra: { runtime_instance_ids: hosts.slice(0, 10).map((host) => host.id) },
    });
  }
  return only;
}

/** The caller's own key, checked against the credential the request was authenticated with. */
function presentedKey(actor: Extract<Actor, { kind: 'api_key' }>, presented: string | undefined): string {
  const parsed = presented === undefined ? null : parseApiKey(presented);
  if (!presented || parsed?.prefix !== actor.prefix) {
    // The router authenticated this very header, so this only happens if the two ever disagree.
    throw new AppError({
      status: 500,
      code: 'presented_key_mismatch',
      message: 'runtime config: the x-api-key header does not match the authenticated key',
    });
  }
  return presented;
}

/**
 * Mints the host's agent-runtime key for a participant's pull and revokes the one the previous pull minted,
 * so each pull rotates the host's runtime key. The host row is locked, so concurrent pulls leave exactly
 * one live runtime key per host. The caller invalidates the revoked key in the key cache after commit.
 */
async function rotateHostRuntimeKey(
  deps: HubDeps,
  actor: ParticipantActor,
  host: RuntimeHost,
  requestId: string | undefined,
) {
  const generated = generateApiKey();
  const scopes = [...SCOPE_PRESETS['agent-runtime']];
  const now = deps.now();
  return deps.db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM runtime_hosts WHERE id = ${host.id} FOR UPDATE`;
    const current = await tx.runtimeHost.findUniqueOrThrow({
      where: { id: host.id },
      select: { runtimeApiKeyId: true },
    });
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
          reason: 'runtime_config_pull',
          runtime_instance_id: host.id,
        },
        requestId,
      },
      tx,
    );
    let revokedKeyId: string | null = null;
    if (current.runtimeApiKeyId) {
      const revoked = await tx.apiKey.updateMany({
        where: { id: current.runtimeApiKeyId, workspaceId: host.workspaceId, revokedAt: null },
        data: { revokedAt: now },
      });
      if (revoked.count > 0) {
        revokedKeyId = current.runtimeApiKeyId;
        const previous = await tx.apiKey.findUniqueOrThrow({
          where: { id: current.runtimeApiKeyId },
          select: { prefix: true },
        });
        await deps.audit.record(
          {
            workspaceId: host.workspaceId,
            actor,
            action: 'api_key.revoked',
            targetType: 'api_key',
            targetId: current.runtimeApiKeyId,
            data: { prefix: previous.prefix, reason: 'runtime_config_pull', runtime_instance_id: host.id },
            requestId,
          },
          tx,
        );
      }
    }
    await tx.runtimeHost.update({ where: { id: host.id }, data: { runtimeApiKeyId: key.id } });
    return { key, fullKey: generated.key, revokedKeyId };
  });
}

/**
 * What a runtime host needs to run: its console router and relay endpoints, its relay token and a workspace
 * API key. A key caller gets back the key it presented; a participant's pull mints a fresh agent-runtime
 * key for the host and revokes the previous one. Every pull is audited as `runtime_config.pulled`, naming
 * the host, the caller and whether a key was minted, never a secret.
 */
export async function pullRuntimeConfig(
  deps: HubDeps,
  input: PullRuntimeConfigInput,
): Promise<PulledRuntimeConfig> {
  const { actor, workspace } = input;
  const host = await selectHost(deps, workspace.id, input.runtimeInstanceId);
  const relayToken = deps.box.open(host.relayTokenCiphertext, host.id);

  let workspaceApiKey: string;
  let apiKeyId: string;
  let revokedKeyId: string | null = null;
  let minted = false;
  if (actor.kind === 'api_key') {
    workspaceApiKey = presentedKey(actor, input.presentedApiKey);
    apiKeyId = actor.keyId;
  } else if (actor.kind === 'participant') {
    const rotated = await rotateHostRuntimeKey(deps, actor, host, input.requestId);
    // Committed: this replica stops accepting the previous runtime key at once.
    if (rotated.revokedKeyId) deps.apiKeys.invalidate(rotated.revokedKeyId);
    workspaceApiKey = rotated.fullKey;
    apiKeyId = rotated.key.id;
    revokedKeyId = rotated.revokedKeyId;
    minted = true;
  } else {
    throw new AppError({
      status: 403,
      code: 'actor_not_allowed',
      detail: 'Runtime config is for workspace operators and runtime keys.',
    });
  }

  await deps.audit.record({
    workspaceId: workspace.id,
    actor,
    action: 'runtime_config.pulled',
    targetType: 'runtime_host',
    targetId: host.id,
    data: {
      runtime_instance_id: host.id,
      api_key_minted: minted,
      api_key_id: apiKeyId,
      revoked_api_key_id: revokedKeyId,
    },
    requestId: input.requestId,
  });
  deps.logger.info(
    { runtime_instance_id: host.id, api_key_id: apiKeyId, api_key_minted: minted },
    'runtime config pulled',
  );
  const environment = (await environmentsOfHosts(deps.db, [host.id])).get(host.id) ?? null;
  return { host, relayToken, workspaceApiKey, apiKeyId, minted, environment };
}
