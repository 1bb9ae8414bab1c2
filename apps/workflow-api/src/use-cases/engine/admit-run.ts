import { lockRunStartsOfWorkspace } from '../../data/invocations.locks';
import { countRunsInProgress, loadRunLimits } from '../../data/run-limits.lookups';
import type { Sql } from '../../db';
import type { Blocker } from '../../domain/blockers';
import { reachedRunLimit } from '../../domain/run-limits';
import type { RunLimits } from '../../domain/run-limits';
import type { Invocation } from '../../generated/prisma/client';

/**
 * Whether the invocation's run may start now under its project's and workspace's run limits: null when it may,
 * else the limit's blocker. With a limit set, starts in a workspace are serialized by a transaction advisory
 * lock held until the commit that marks the run `running`, so two starts never both take the last slot.
 * Without limits this is one read (none when the caller read them with the invocation's lock).
 */
export async function runLimitBlocking(
  sql: Sql,
  invocation: Pick<Invocation, 'projectId' | 'workspaceId'>,
  /** The limits as read under the invocation's lock in this transaction, when the caller has them. */
  known?: RunLimits,
): Promise<Blocker | null> {
  const { projectId, workspaceId } = invocation;
  const limits = known ?? (await loadRunLimits(sql, projectId, workspaceId));
  if (limits.project === null && limits.workspace === null) return null;
  await lockRunStartsOfWorkspace(sql, workspaceId);
  const again = await loadRunLimits(sql, projectId, workspaceId);
  const inProgress = await countRunsInProgress(sql, projectId, workspaceId, again.workspace !== null);
  return reachedRunLimit(again, inProgress);
}
