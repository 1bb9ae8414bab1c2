import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { findProjectFor } from '../../data/projects.lookups';
import { announceRosterChanged } from '../../data/roster.notices';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Ends a team's assignment to a project. The assignment is kept with `unassignedAt` set (assigning again
 * reactivates it); ending an ended assignment changes nothing. An ended assignment is announced after the
 * commit (the project's roster changes; decision 105).
 */
export async function unassignProjectTeam(
  deps: HubDeps,
  actor: Actor,
  input: { projectId: string; teamId: string; requestId?: string },
) {
  const project = await findProjectFor(deps, actor, input.projectId, TEAM_MANAGER_ROLES);
  const key = { projectId_teamId: { projectId: project.id, teamId: input.teamId } };
  let ended = false;
  const assignment = await deps.db.$transaction(async (tx) => {
    const { count } = await tx.projectTeam.updateMany({
      where: { projectId: project.id, teamId: input.teamId, unassignedAt: null },
      data: { unassignedAt: deps.now() },
    });
    const assignment = await tx.projectTeam.findUnique({ where: key, include: { team: true } });
    if (!assignment) {
      throw new AppError({
        status: 404,
        code: 'project_team_not_found',
        detail: `Team '${input.teamId}' was never assigned to project '${project.id}'.`,
      });
    }
    if (count === 1) {
      ended = true;
      await deps.audit.record(
        {
          workspaceId: project.workspaceId,
          actor,
          action: 'project.team_unassigned',
          targetType: 'project',
          targetId: project.id,
          data: { team_id: assignment.teamId, team_name: assignment.team.name },
          requestId: input.requestId,
        },
        tx,
      );
    }
    return assignment;
  });
  if (ended) await announceRosterChanged(deps, project.workspaceId);
  return assignment;
}
