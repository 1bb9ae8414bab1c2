import type { ParticipantActor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { sqlOfPrisma } from '../../db';
import type { Tx } from '../../db';
import { loadRunLimits } from '../../data/run-limits.lookups';
import type { WorkflowDeps } from '../../deps';
import type { RunLimits } from '../../domain/run-limits';
import { getRunLimits } from './get-run-limits';
import type { RunLimitsView } from './get-run-limits';

export type RunLimitsPatch = WorkflowApi.components['schemas']['RunLimitsPatch'];

async function store(
  tx: Tx,
  scope: 'project' | 'workspace',
  scopeId: string,
  workspaceId: string,
  limit: number | null,
): Promise<void> {
  if (limit === null) {
    await tx.runLimit.deleteMany({ where: { scopeId } });
    return;
  }
  await tx.runLimit.upsert({
    where: { scopeId },
    create: { scopeId, scope, workspaceId, maxInProgress: limit },
    update: { maxInProgress: limit },
  });
}

/**
 * Sets or clears the project's and its workspace's run limits (the contract's schema bounds them; the access
 * guard admits workspace owners and admins only). Fields sent replace the stored ones; a change is the audit
 * event `run_limits.changed` with the limits before and after, in the same transaction. Runs already in
 * progress are never stopped; queued launches start as slots free (the sweeper wakes them).
 */
export async function updateRunLimits(
  deps: WorkflowDeps,
  actor: ParticipantActor,
  project: ProjectRef,
  patch: RunLimitsPatch,
  requestId?: string,
): Promise<RunLimitsView> {
  const workspaceId = project.workspace.id;
  await deps.db.$transaction(
    async (tx) => {
      // One writer of a workspace's limits at a time (the same lock admits runs: decision 88).
      await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${`run-limits:${workspaceId}`}, 0))`;
      const before = await loadRunLimits(sqlOfPrisma(tx), project.id, workspaceId);
      const after: RunLimits = {
        project:
          patch.project_max_runs_in_progress !== undefined
            ? patch.project_max_runs_in_progress
            : before.project,
        workspace:
          patch.workspace_max_runs_in_progress !== undefined
            ? patch.workspace_max_runs_in_progress
            : before.workspace,
      };
      if (after.project === before.project && after.workspace === before.workspace) return;
      if (after.project !== before.project) {
        await store(tx, 'project', project.id, workspaceId, after.project);
      }
      if (after.workspace !== before.workspace) {
        await store(tx, 'workspace', workspaceId, workspaceId, after.workspace);
      }
      await deps.audit.record(
        {
          workspaceId,
          projectId: project.id,
          actor,
          action: 'run_limits.changed',
          targetType: 'project',
          targetId: project.id,
          data: {
            before: {
              project_max_runs_in_progress: before.project,
              workspace_max_runs_in_progress: before.workspace,
            },
            after: {
              project_max_runs_in_progress: after.project,
              workspace_max_runs_in_progress: after.workspace,
            },
          },
          ...(requestId ? { requestId } : {}),
        },
        tx,
      );
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  return getRunLimits(deps, project);
}
