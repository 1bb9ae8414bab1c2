import type { HubDeps } from '../../deps';
import type { WorkflowDraft } from '../../generated/prisma/client';

/** Workflow drafts of a workspace, oldest first (ids sort by creation time), optionally of one project. */
export function listWorkflowDrafts(
  deps: HubDeps,
  workspaceId: string,
  filters: { projectId?: string; after?: string; limit: number },
): Promise<WorkflowDraft[]> {
  return deps.db.workflowDraft.findMany({
    where: {
      workspaceId,
      ...(filters.projectId ? { projectId: filters.projectId } : {}),
      ...(filters.after ? { id: { gt: filters.after } } : {}),
    },
    orderBy: { id: 'asc' },
    take: filters.limit,
  });
}
