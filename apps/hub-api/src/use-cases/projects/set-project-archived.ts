import type { Actor } from '@svc/auth';
import { findProjectFor } from '../../data/projects.lookups';
import type { HubDeps } from '../../deps';
import { PROJECT_EDITOR_ROLES } from '../../domain/roles';
import type { Project } from '../../generated/prisma/client';

/**
 * Archives a project (`archived: true`) or brings it back. An archived project is hidden from project lists
 * by default and the Workflow API refuses new invocations in it; what it holds stays readable. Asking for
 * the state the project is already in changes nothing and records nothing. Audited as `project.archived` /
 * `project.unarchived`, and announced
 * (`project_changed`) after the commit so every Workflow API replica drops its cached copy at once.
 */
export async function setProjectArchived(
  deps: HubDeps,
  actor: Actor,
  input: { projectId: string; archived: boolean; requestId?: string },
): Promise<Project> {
  const project = await findProjectFor(deps, actor, input.projectId, PROJECT_EDITOR_ROLES);
  const { updated, changed } = await deps.db.$transaction(async (tx) => {
    // Only a row in the other state changes, so two concurrent calls record one event.
    const changed = await tx.project.updateMany({
      where: { id: project.id, archivedAt: input.archived ? null : { not: null } },
      data: { archivedAt: input.archived ? deps.now() : null },
    });
    if (changed.count === 1) {
      await deps.audit.record(
        {
          workspaceId: project.workspaceId,
          actor,
          action: input.archived ? 'project.archived' : 'project.unarchived',
          targetType: 'project',
          targetId: project.id,
          data: { code: project.code },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return {
      updated: await tx.project.findUniqueOrThrow({ where: { id: project.id } }),
      changed: changed.count,
    };
  });
  // Services caching the project (its archived mark) drop it at once, on every replica (decision 92).
  if (changed === 1) {
    await deps.notices.publish({
      kind: 'project_changed',
      project_id: project.id,
      workspace_id: project.workspaceId,
    });
  }
  return updated;
}
