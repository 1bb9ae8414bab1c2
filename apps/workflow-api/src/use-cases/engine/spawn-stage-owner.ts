import { readOwnerSpawn, readSpawnReadiness, requestOwnerSpawn } from '../../data/owner-spawns.hub';
import type { WorkflowDeps } from '../../deps';
import type { Blocker } from '../../domain/blockers';
import {
  SPAWN_ATTEMPTS,
  SPAWN_RETRY_AFTER_MS,
  ownerSpawnFailedBlocker,
  ownerSpawnKey,
  ownerSpawnKeyPrefix,
  judgeOwnerSpawn,
  ownerSpawningBlocker,
  spawnPolicyBlockers,
  storedOwnerSpawn,
} from '../../domain/owner-spawn';
import type { StoredOwnerSpawn } from '../../domain/owner-spawn';
import type { Invocation, RunStage } from '../../generated/prisma/client';

export type StageOwnerSpawn =
  /** The hub spawns (or spawned) the owner: the run waits for it to come online. */
  | { kind: 'spawning'; blocker: Blocker; requested: StoredOwnerSpawn | null }
  /** Every attempt failed: the run waits for an agent started another way. */
  | { kind: 'failed'; blocker: Blocker }
  /** The policy does not allow a spawn: why not. */
  | { kind: 'not_allowed'; blockers: Blocker[] }
  /** The hub could not be asked. */
  | { kind: 'unknown' };

/** A spawn outcome and the record the stage is to keep (null: what it stores stays). */
export interface PlannedOwnerSpawn {
  outcome: StageOwnerSpawn;
  keep: StoredOwnerSpawn | null;
}

/**
 * When no roster agent can own the current stage: the owner the hub spawns for it (spec: two launch paths,
 * hub spawn). The spawn is asked for once per owner needed (a key per stall and attempt, so a repeat of the
 * reconcile finds the same spawn), followed on later passes, and asked for again under a new key when it
 * failed, at most {@link SPAWN_ATTEMPTS} times. A spawn whose agent started but did not take the stage within
 * `SPAWN_ONLINE_WITHIN_MS` counts as failed (`spawned_agent_not_online`) and is asked for again at once. Only
 * the hub is asked here, before the reconcile's transaction; what the stage keeps (`keep`) is written in it.
 */
export async function spawnStageOwner(input: {
  deps: WorkflowDeps;
  invocation: Invocation;
  stage: RunStage;
  now: Date;
}): Promise<PlannedOwnerSpawn> {
  let kept: StoredOwnerSpawn | null = null;
  const outcome = await spawnOutcome(input, (spawn) => {
    kept = spawn;
    return spawn;
  });
  return { outcome, keep: kept };
}

async function spawnOutcome(
  input: { deps: WorkflowDeps; invocation: Invocation; stage: RunStage; now: Date },
  keep: (spawn: StoredOwnerSpawn) => StoredOwnerSpawn,
): Promise<StageOwnerSpawn> {
  const { deps, invocation, stage, now } = input;
  const needed = (stage.requiredCapabilities as string[]) ?? [];
  const stalledOwners = ((stage.stalledAgentIds as string[]) ?? []).length;
  let stored = (stage.ownerSpawn as StoredOwnerSpawn | null) ?? null;
  // A spawn for an earlier owner of this stage (one that stalled since) does not count.
  if (stored && !stored.spawn_key.startsWith(ownerSpawnKeyPrefix(stage.id, stalledOwners))) {
    stored = null;
  }

  if (stored && stored.state !== 'failed') {
    const fresh = await readOwnerSpawn(deps, stored.spawn_id);
    const current = fresh ? storedOwnerSpawn(fresh, stored.spawn_key, stored.attempt) : stored;
    // Still no owner: a spawned agent that never came online is an attempt that failed.
    const judged = judgeOwnerSpawn(current, now);
    if (fresh || judged !== current) stored = keep(judged);
    if (stored.state !== 'failed') {
      return { kind: 'spawning', blocker: ownerSpawningBlocker(stage.key, needed, stored), requested: null };
    }
  }
  if (stored?.state === 'failed') {
    const finishedAt = Date.parse(stored.finished_at ?? stored.requested_at);
    if (stored.attempt + 1 >= SPAWN_ATTEMPTS || now.getTime() - finishedAt < SPAWN_RETRY_AFTER_MS) {
      return { kind: 'failed', blocker: ownerSpawnFailedBlocker(stage.key, needed, stored) };
    }
  }

  const readiness = await readSpawnReadiness(deps, invocation.projectId, needed);
  if (!readiness) return { kind: 'unknown' };
  if (!readiness.allowed) return { kind: 'not_allowed', blockers: spawnPolicyBlockers(stage.key, readiness) };
  const attempt = stored ? stored.attempt + 1 : 0;
  const key = ownerSpawnKey(stage.id, stalledOwners, attempt);
  const result = await requestOwnerSpawn(deps, {
    projectId: invocation.projectId,
    spawnKey: key,
    capabilities: needed,
    invocationId: invocation.id,
    stageKey: stage.key,
  });
  if (result.kind === 'unreachable') return { kind: 'unknown' };
  if (result.kind === 'refused') {
    // The hosts changed between the two reads: the readiness of a moment ago says why.
    const again = await readSpawnReadiness(deps, invocation.projectId, needed);
    return {
      kind: 'not_allowed',
      blockers: spawnPolicyBlockers(stage.key, again && !again.allowed ? again : { blockers: [] }),
    };
  }
  const requested = keep(storedOwnerSpawn(result.spawn, key, attempt));
  if (requested.state === 'failed') {
    return { kind: 'failed', blocker: ownerSpawnFailedBlocker(stage.key, needed, requested) };
  }
  return { kind: 'spawning', blocker: ownerSpawningBlocker(stage.key, needed, requested), requested };
}

/**
 * The stage is being given an owner: the spawn it kept is read a last time, so what the invocation shows ends in
 * its outcome (`started`, with the agent) rather than the state it had while the run waited. Null when there is
 * nothing to update (asked before the reconcile's transaction; the transaction keeps it).
 */
export async function settleStageOwnerSpawn(
  deps: WorkflowDeps,
  stage: RunStage,
): Promise<StoredOwnerSpawn | null> {
  const stored = (stage.ownerSpawn as StoredOwnerSpawn | null) ?? null;
  if (!stored || stored.state === 'started' || stored.state === 'failed') return null;
  const fresh = await readOwnerSpawn(deps, stored.spawn_id);
  return fresh ? storedOwnerSpawn(fresh, stored.spawn_key, stored.attempt) : null;
}
