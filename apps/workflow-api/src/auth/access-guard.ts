import { AppError } from '@svc/service-kit';
import type { OperationContext, OperationGuard } from '@svc/service-kit';
import type { MemberDirectory, Membership } from './member-directory';
import type { ProjectDirectory, ProjectRef } from './project-directory';

interface Locals {
  project?: ProjectRef;
}

const projectNotFound = (projectId: string) =>
  new AppError({ status: 404, code: 'project_not_found', detail: `No project '${projectId}'.` });

/**
 * Operations whose use case checks the participant's role itself and answers its own, more specific code
 * (`approval_role_required`, `assistance_role_required`).
 */
const ROLE_CHECKED_BY_USE_CASE = new Set(['decideInvocationApproval', 'updateAssistanceSettings']);

/**
 * Scopes every Workflow API call to the caller's workspace: a `{projectId}` must belong to it (anything else is
 * reported as not found, so other workspaces' projects do not leak), and a `{workspaceId}` must be it (403).
 * A participant's workspace is any they are a member of, and their role must be one the operation's
 * `x-svc-participant-roles` lists (403 `role_forbidden`), as on the hub.
 */
export function accessGuard(projects: ProjectDirectory, members?: MemberDirectory): OperationGuard {
  return async (ctx) => {
    const params = ctx.params as Record<string, unknown>;
    const actor = ctx.actor;
    const actorWorkspace =
      actor && (actor.kind === 'api_key' || actor.kind === 'agent') ? actor.workspaceId : undefined;
    const roleAllowed = (member: Membership) => {
      const roles = ctx.operation.participantRoles;
      if (!roles || ROLE_CHECKED_BY_USE_CASE.has(ctx.operation.operationId) || roles.includes(member.role))
        return;
      throw new AppError({
        status: 403,
        code: 'role_forbidden',
        detail: `This action needs one of the workspace roles ${roles.join(', ')}; you are ${member.role}.`,
        extra: { required_roles: roles, role: member.role },
      });
    };
    if (ctx.operation.pathParams.includes('workspaceId')) {
      const workspaceId = String(params.workspaceId);
      const member =
        actor?.kind === 'participant' && members
          ? await members.find(workspaceId, actor.participantId)
          : null;
      if (member) roleAllowed(member);
      else if (!actorWorkspace || workspaceId !== actorWorkspace) {
        throw new AppError({
          status: 403,
          code: 'workspace_forbidden',
          detail: `You have no access to workspace '${workspaceId}'.`,
        });
      }
    }
    if (ctx.operation.pathParams.includes('projectId')) {
      const projectId = String(params.projectId);
      const project = await projects.find(projectId);
      if (!project) throw projectNotFound(projectId);
      if (actor?.kind === 'participant') {
        // A participant reaches a project of a workspace they are a member of, in a role the operation allows.
        const member = members ? await members.find(project.workspace.id, actor.participantId) : null;
        if (!member) throw projectNotFound(projectId);
        roleAllowed(member);
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
