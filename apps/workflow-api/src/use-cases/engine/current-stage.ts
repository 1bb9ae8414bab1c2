import { OPEN_STAGE_STATES } from '../../domain/invocation-states';
import type { RunStage } from '../../generated/prisma/client';

/** Where a run stands: every stage done, the current stage kept by its owner, or the current stage needing one. */
export type CurrentStage =
  | { kind: 'done' }
  | {
      kind: 'owned';
      current: RunStage;
      /** When the owner last heartbeated (or was assigned): silent for long, the hub is asked whether it runs. */
      silentSince: Date | null;
    }
  | {
      kind: 'needs_owner';
      current: RunStage;
      /** The owner that stopped heartbeating or was lost (to be released first), if any. */
      stalledOwner: string | null;
      /** Why `stalledOwner` is released: silent past the stall window, or lost by the hub's word. */
      cause: 'stalled' | 'lost' | null;
      silentSince: Date | null;
      stalledIds: string[];
      /** The agents the stage was taken from, the one being released included (sorted). */
      exclude: string[];
    };

/**
 * The current stage (the first neither completed nor skipped) and what it needs: an owner still heartbeating
 * keeps it; an owner silent past `stallAfterMs` is to be released, and so is `lostOwner` when it is the owner
 * (the hub no longer counts it as running: lost with its host, stopped); a stage without an owner needs one.
 * Read the same way before the reconcile's transaction (to ask the hub) and under its lock (to act).
 */
export function currentStage(
  stages: RunStage[],
  now: Date,
  stallAfterMs: number,
  lostOwner: string | null = null,
): CurrentStage {
  const current = stages.find((s) => s.state !== 'completed' && s.state !== 'skipped');
  if (!current) return { kind: 'done' };
  const owned = current.ownerAgentId !== null && OPEN_STAGE_STATES.includes(current.state as never);
  const silentSince = current.lastHeartbeatAt ?? current.assignedAt;
  const stale = owned && silentSince !== null && now.getTime() - silentSince.getTime() > stallAfterMs;
  const lost = owned && !stale && lostOwner !== null && current.ownerAgentId === lostOwner;
  if (owned && !stale && !lost) return { kind: 'owned', current, silentSince };
  const stalledIds = (current.stalledAgentIds as string[]) ?? [];
  const stalledOwner = stale || lost ? current.ownerAgentId : null;
  return {
    kind: 'needs_owner',
    current,
    stalledOwner,
    cause: stale ? 'stalled' : lost ? 'lost' : null,
    silentSince,
    stalledIds,
    exclude: (stalledOwner ? [...stalledIds, stalledOwner] : [...stalledIds]).sort(),
  };
}
