import { OPEN_STAGE_STATES } from '../../domain/invocation-states';
import type { RunStage } from '../../generated/prisma/client';

/** Where a run stands: every stage done, the current stage kept by its owner, or the current stage needing one. */
export type CurrentStage =
  | { kind: 'done' }
  | { kind: 'owned'; current: RunStage }
  | {
      kind: 'needs_owner';
      current: RunStage;
      /** The owner that stopped heartbeating (to be released first), if any. */
      stalledOwner: string | null;
      silentSince: Date | null;
      stalledIds: string[];
      /** Agents not to offer the stage: its stalled owners, the one being released included. */
      exclude: string[];
    };

/**
 * The current stage (the first neither completed nor skipped) and what it needs: an owner still heartbeating
 * keeps it; an owner silent past `stallAfterMs` is to be released; a stage without an owner needs one. Read
 * the same way before the reconcile's transaction (to ask the hub) and under its lock (to act).
 */
export function currentStage(stages: RunStage[], now: Date, stallAfterMs: number): CurrentStage {
  const current = stages.find((s) => s.state !== 'completed' && s.state !== 'skipped');
  if (!current) return { kind: 'done' };
  const owned = current.ownerAgentId !== null && OPEN_STAGE_STATES.includes(current.state as never);
  const silentSince = current.lastHeartbeatAt ?? current.assignedAt;
  const stale = owned && silentSince !== null && now.getTime() - silentSince.getTime() > stallAfterMs;
  if (owned && !stale) return { kind: 'owned', current };
  const stalledIds = (current.stalledAgentIds as string[]) ?? [];
  const stalledOwner = stale ? current.ownerAgentId : null;
  return {
    kind: 'needs_owner',
    current,
    stalledOwner,
    silentSince,
    stalledIds,
    exclude: stalledOwner ? [...stalledIds, stalledOwner] : stalledIds,
  };
}
