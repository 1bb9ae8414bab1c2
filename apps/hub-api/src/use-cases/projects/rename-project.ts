import type { Actor } from '@svc/auth';
import { findProjectFor } from '../../data/projects.lookups';
import type { HubDeps } from '../../deps';
import { PROJECT_EDITOR_ROLES } from '../../domain/roles';
import type { Project } from '../../generated/prisma/client';

/**
 * Renames a project (code and id stay). Names need not be unique: the workspace-unique code tells projects
 * of the same name apart. Audited as `project.renamed` with both names; the same name again changes nothing.
 */
export async function renameProject(
  deps: HubDeps,
  actor: Actor,
  input: { projectId: string; name: string; requestId?: string },
): Promise<Project> {
  const project = await findProjectFor(deps, actor, input.projectId, PROJECT_EDITOR_ROLES);
  if (project.name === input.name) return project;
  return deps.db.$transaction(async (tx) => {
    const renamed = await tx.project.update({ where: { id: project.id }, data: { name: input.name } });
    await deps.audit.record(
      {
        workspaceId: project.workspaceId,
        actor,
        action: 'project.renamed',
        targetType: 'project',
        targetId: project.id,
        data: { from: project.name, to: input.name },
        requestId: input.requestId,
      },
      tx,
    );
    return renamed;
  });
}
