import type { Actor } from '@svc/auth';
import { parseApiKey } from '@svc/auth';
import { AppError } from '@svc/service-kit';
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
  /** The key handed out: the presented one for a key caller, the new one after a rotation, else null. */
  workspaceApiKey: string | null;
  /** The host's current and previous runtime keys (ids and prefixes only). */
  runtimeKeys: RuntimeKeyPair | null;
  /** The host's runtime environment, whose active tunnel gives its public URLs. */
  environment: HostEnvironment | null;
}

export interface RuntimeKeyPair {
  current: { id: string; prefix: string; issuedAt: Date; issuedBy: string | null };
  previous: { id: string; prefix: string; validUntil: Date } | null;
}

/**
 * The host's current runtime key (none once it is revoked or expired) and the one the last rotation superseded
 * while it is still valid.
 */
export async function runtimeKeysOf(
  deps: Pick<HubDeps, 'db' | 'now'>,
  host: RuntimeHost,
): Promise<RuntimeKeyPair | null> {
  if (!host.runtimeApiKeyId) return null;
  const ids = [host.runtimeApiKeyId, host.previousRuntimeApiKeyId].filter((id): id is string => !!id);
  const keys = await deps.db.apiKey.findMany({
    where: { id: { in: ids }, workspaceId: host.workspaceId },
    select: { id: true, prefix: true, createdAt: true, revokedAt: true, expiresAt: true },
  });
  const now = deps.now();
  const current = keys.find((key) => key.id === host.runtimeApiKeyId);
  // A revoked or expired key is no current key: the next pull issues a new one.
  if (!current || current.revokedAt || (current.expiresAt && current.expiresAt.getTime() <= now.getTime()))
    return null;
  const previous = keys.find(
    (key) =>
      key.id === host.previousRuntimeApiKeyId &&
      !key.revokedAt &&
      key.expiresAt !== null &&
      key.expiresAt.getTime() > now.getTime(),
  );
  return {
    current: {
      id: current.id,
      prefix: current.prefix,
      issuedAt: host.runtimeKeyRotatedAt ?? current.createdAt,
      issuedBy: host.runtimeKeyRotatedBy,
    },
    previous: previous?.expiresAt
      ? { id: previous.id, prefix: previous.prefix, validUntil: previous.expiresAt }
      : null,
  };
}

export async function selectHost(deps: HubDeps, workspaceId: string, runtimeInstanceId: string | undefined) {
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
 * What a runtime host needs to run: its console router and relay endpoints, its relay token and, for a key
 * caller, the key it presented. Safe to repeat: nothing is minted or revoked (a participant gets no key; a new
 * runtime key is issued only by `rotateRuntimeKey`). Every pull is audited as `runtime_config.pulled`, naming
 * the host, the caller and the key handed out, never a secret.
 */
export async function pullRuntimeConfig(
  deps: HubDeps,
  input: PullRuntimeConfigInput,
): Promise<PulledRuntimeConfig> {
  const { actor, workspace } = input;
  if (actor.kind !== 'api_key' && actor.kind !== 'participant') {
    throw new AppError({
      status: 403,
      code: 'actor_not_allowed',
      detail: 'Runtime config is for workspace operators and runtime keys.',
    });
  }
  const host = await selectHost(deps, workspace.id, input.runtimeInstanceId);
  const relayToken = deps.box.open(host.relayTokenCiphertext, host.id);
  const workspaceApiKey = actor.kind === 'api_key' ? presentedKey(actor, input.presentedApiKey) : null;
  const apiKeyId = actor.kind === 'api_key' ? actor.keyId : null;

  await deps.audit.record({
    workspaceId: workspace.id,
    actor,
    action: 'runtime_config.pulled',
    targetType: 'runtime_host',
    targetId: host.id,
    data: { runtime_instance_id: host.id, api_key_minted: false, api_key_id: apiKeyId },
    requestId: input.requestId,
  });
  deps.logger.info({ runtime_instance_id: host.id, api_key_id: apiKeyId }, 'runtime config pulled');
  const [environments, runtimeKeys] = await Promise.all([
    environmentsOfHosts(deps.db, [host.id]),
    runtimeKeysOf(deps, host),
  ]);
  return {
    host,
    relayToken,
    workspaceApiKey,
    runtimeKeys,
    environment: environments.get(host.id) ?? null,
  };
}
