import type { HubInternalApi, WorkflowApi } from '@svc/contracts';
import { withEffect } from './blockers';
import type { Blocker } from './blockers';

/** What a stage records of the hub's spawn of its owner (and the invocation shows as `owner_spawn`). */
export type OwnerSpawnView = WorkflowApi.components['schemas']['InvocationsOwnerSpawn'];
export type HubSpawn = HubInternalApi.components['schemas']['InternalAgentSpawn'];
export type SpawnReadiness = HubInternalApi.components['schemas']['SpawnReadiness'];
export type SpawnBlockerCode = HubInternalApi.components['schemas']['SpawnBlocker']['code'];

/** What the engine keeps on the stage: the view plus the idempotency key and attempt it used. */
export interface StoredOwnerSpawn extends OwnerSpawnView {
  spawn_key: string;
  attempt: number;
  finished_at: string | null;
}

/** A failed spawn is asked for again after this long, at most this many times per owner needed. */
export const SPAWN_RETRY_AFTER_MS = 30_000;
export const SPAWN_ATTEMPTS = 3;
/**
 * A spawned agent that the hub reports `started` but that has not taken the stage this long after its start
 * (it crashed, never heartbeated, or came up unable to own the stage) counts as a failed attempt.
 */
export const SPAWN_ONLINE_WITHIN_MS = 120_000;
/** The `error_code` of a spawn whose agent started but did not come online in time. */
export const SPAWNED_AGENT_NOT_ONLINE = 'spawned_agent_not_online';

/**
 * The spawn as the engine judges it: a `started` spawn whose agent has not owned the stage within
 * {@link SPAWN_ONLINE_WITHIN_MS} of its start is failed with {@link SPAWNED_AGENT_NOT_ONLINE}; anything else is
 * as the hub reports it. Only called while the stage still has no owner.
 */
export function judgeOwnerSpawn(stored: StoredOwnerSpawn, now: Date): StoredOwnerSpawn {
  if (stored.state !== 'started' || !stored.finished_at) return stored;
  if (now.getTime() - Date.parse(stored.finished_at) < SPAWN_ONLINE_WITHIN_MS) return stored;
  return { ...stored, state: 'failed', error_code: SPAWNED_AGENT_NOT_ONLINE };
}

/**
 * The idempotency key of the spawn for a stage: one owner per stall (a stage whose spawned owner stalled
 * needs another) and per attempt (a failed spawn is tried again under a new key).
 */
export function ownerSpawnKey(stageId: string, stalledOwners: number, attempt: number): string {
  return `${ownerSpawnKeyPrefix(stageId, stalledOwners)}${attempt}`;
}

/** The part of {@link ownerSpawnKey} shared by every attempt for one owner. */
export function ownerSpawnKeyPrefix(stageId: string, stalledOwners: number): string {
  return `${stageId}:owner:${stalledOwners}:`;
}

export function storedOwnerSpawn(spawn: HubSpawn, key: string, attempt: number): StoredOwnerSpawn {
  return {
    spawn_id: spawn.id,
    state: spawn.state,
    agent_name: spawn.name,
    agent_id: spawn.agent_id,
    runtime_instance_id: spawn.runtime_instance_id,
    requested_at: spawn.created_at,
    error_code: spawn.error?.code ?? null,
    spawn_key: key,
    attempt,
    finished_at: spawn.finished_at ?? null,
  };
}

/** The public view of what the stage keeps. */
export function ownerSpawnView(stored: unknown): OwnerSpawnView | null {
  if (!stored || typeof stored !== 'object') return null;
  const s = stored as StoredOwnerSpawn;
  return {
    spawn_id: s.spawn_id,
    state: s.state,
    agent_name: s.agent_name,
    agent_id: s.agent_id,
    runtime_instance_id: s.runtime_instance_id,
    requested_at: s.requested_at,
    error_code: s.error_code,
  };
}

const capabilitiesText = (needed: readonly string[]) =>
  needed.length > 0 ? `capabilities ${needed.join(', ')}` : 'any capabilities';

/** The hub is spawning the stage's owner: the run waits for it (attention `owner_spawning`). */
export function ownerSpawningBlocker(
  stageKey: string,
  needed: readonly string[],
  spawn: OwnerSpawnView,
): Blocker {
  return withEffect({
    category: 'roster_ownership',
    code: 'stage_owner_spawning',
    stage_key: stageKey,
    spawn_id: spawn.spawn_id,
    runtime_instance_ids: [spawn.runtime_instance_id],
    message: `No running roster agent could own stage '${stageKey}' (it needs ${capabilitiesText(needed)}); the hub is spawning agent '${spawn.agent_name}' on runtime host ${spawn.runtime_instance_id} (spawn ${spawn.spawn_id}, ${spawn.state}).`,
    recommended_action:
      'Nothing to do: the stage is assigned as soon as the spawned agent is online. Follow the spawn at the hub if it takes long.',
  });
}

/** Every attempt to spawn the stage's owner failed: the run waits for an agent started another way. */
export function ownerSpawnFailedBlocker(
  stageKey: string,
  needed: readonly string[],
  spawn: OwnerSpawnView,
): Blocker {
  return withEffect({
    category: 'spawn_policy',
    code: 'stage_owner_spawn_failed',
    stage_key: stageKey,
    spawn_id: spawn.spawn_id,
    runtime_instance_ids: [spawn.runtime_instance_id],
    message:
      spawn.error_code === SPAWNED_AGENT_NOT_ONLINE
        ? `The agent '${spawn.agent_name}' spawned for stage '${stageKey}' on runtime host ${spawn.runtime_instance_id} started but did not come online within ${SPAWN_ONLINE_WITHIN_MS / 1000} s (spawn ${spawn.spawn_id}, ${SPAWNED_AGENT_NOT_ONLINE}).`
        : `The hub could not spawn an owner for stage '${stageKey}' on runtime host ${spawn.runtime_instance_id}: ${spawn.error_code ?? 'unknown error'} (spawn ${spawn.spawn_id}).`,
    recommended_action: `Check the spawn at the hub and the host's relay, or start an agent with ${capabilitiesText(needed)} for the project; the run continues when one is online.`,
  });
}

/** Why the hub will not spawn an owner for a stage (preflight and the engine report the same). */
export function spawnPolicyBlockers(
  stageKey: string,
  readiness: Pick<SpawnReadiness, 'blockers'>,
): Blocker[] {
  return readiness.blockers.map((b) =>
    withEffect({
      category: 'spawn_policy',
      code: b.code,
      stage_key: stageKey,
      message: b.message,
      recommended_action: b.recommended_action,
      ...(b.runtime_instance_ids.length > 0 ? { runtime_instance_ids: b.runtime_instance_ids } : {}),
      ...(b.retry_after_seconds !== undefined ? { retry_after_seconds: b.retry_after_seconds } : {}),
    }),
  );
}
