import { AppError } from '@svc/service-kit';
import type { OperationContext, OperationGuard } from '@svc/service-kit';
import type { MemberDirectory } from './member-directory';
import type { ProjectDirectory, ProjectRef } from './project-directory';

interface Locals {
  project?: ProjectRef;
}

const projectNotFound = (projectId: string) =>
  new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });

/**
 * Scopes every Workflow API call to the caller's workspace: a `{projectId}` must belong to it (anything else is
 * reported as not found, so other workspaces' projects do not leak), and a `{workspaceId}` must be it (403).
 */
export function accessGuard(projects: ProjectDirectory, members?: MemberDirectory): OperationGuard {
  return async (ctx) => {
    const params = ctx.params as Record<string, unknown>;
    const actor = ctx.actor;
    const actorWorkspace =
      actor && (actor.kind === 'api_key' || actor.kind === 'agent') ? actor.workspaceId : undefined;
    if (ctx.operation.pathParams.includes('workspaceId')) {
      if (!actorWorkspace || params.workspaceId !== actorWorkspace) {
        throw new AppError({
          status: 403,
          code: 'workspace_forbidden',
          detail: `You have no access to workspace '${String(params.workspaceId)}'.`,
        });
      }
    }
    if (ctx.operation.pathParams.includes('projectId')) {
      const projectId = String(params.projectId);
      const project = await projects.find(projectId);
      if (!project) throw projectNotFound(projectId);
      if (actor?.kind === 'participant') {
        // A participant reaches a project of a workspace they are a member of (roles are checked per operation).
        const member = members ? await members.find(project.workspace.id, actor.participantId) : null;
        if (!member) throw projectNotFound(projectId);
      } else if (project.workspace.id !== actorWorkspace) {
        throw projectNotFound(projectId);
      }
      (ctx.res.locals as Locals).project = project;
    }
  };
}

/** The project the guard resolved for this request. */
export function projectOf(ctx: OperationContext<unknown>): ProjectRef {
  const project = (ctx.res.locals as Locals).project;
  if (!project) throw new Error(`${ctx.operation.operationId}: access guard did not run`);
  return project;
}
