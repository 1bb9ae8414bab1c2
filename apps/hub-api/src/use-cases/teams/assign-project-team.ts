import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { findProjectFor } from '../../data/projects.lookups';
import { announceRosterChanged } from '../../data/roster.notices';
import { TEAM_MANAGER_ROLES } from '../../domain/roles';

/**
 * Assigns a team of the project's workspace to the project. A new assignment or the reactivation of an
 * ended one reports `changed: true`, announced after the commit (the project's roster changes; decision 105);
 * a team that is already assigned is returned unchanged.
 */
export async function assignProjectTeam(
  deps: HubDeps,
  actor: Actor,
  input: { projectId: string; teamId: string; requestId?: string },
) {
  const project = await findProjectFor(deps, actor, input.projectId, TEAM_MANAGER_ROLES);
  const key = { projectId_teamId: { projectId: project.id, teamId: input.teamId } };
  const result = await deps.db.$transaction(async (tx) => {
    const team = await tx.team.findFirst({ where: { id: input.teamId, workspaceId: project.workspaceId } });
    if (!team) {
      throw new AppError({
        status: 400,
        code: 'team_not_found',
        detail: `No team '${input.teamId}' in this project's workspace.`,
        extra: { field: 'team_id' },
      });
    }
    const now = deps.now();
    const created = await tx.projectTeam.createMany({
      data: [{ projectId: project.id, teamId: team.id, assignedAt: now }],
      skipDuplicates: true,
    });
    let reactivated = false;
    if (created.count === 0) {
      const reopened = await tx.projectTeam.updateMany({
        where: { projectId: project.id, teamId: team.id, unassignedAt: { not: null } },
        data: { assignedAt: now, unassignedAt: null },
      });
      reactivated = reopened.count === 1;
    }
    const changed = created.count === 1 || reactivated;
    if (changed) {
      await deps.audit.record(
        {
          workspaceId: project.workspaceId,
          actor,
          action: 'project.team_assigned',
          targetType: 'project',
          targetId: project.id,
          data: { team_id: team.id, team_name: team.name, reactivated },
          requestId: input.requestId,
        },
        tx,
      );
    }
    const assignment = await tx.projectTeam.findUniqueOrThrow({ where: key, include: { team: true } });
    return { assignment, changed };
  });
  if (result.changed) await announceRosterChanged(deps, project.workspaceId);
  return result;
}
