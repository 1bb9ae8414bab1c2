import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import { findProjectFor } from '../../data/projects.lookups';

/** Teams assigned to a project the actor can see; ended assignments only when asked for. */
export async function listProjectTeams(
  deps: HubDeps,
  actor: Actor | undefined,
  input: { projectId: string; includeUnassigned: boolean },
) {
  const project = await findProjectFor(deps, actor, input.projectId);
  return deps.db.projectTeam.findMany({
    where: { projectId: project.id, ...(input.includeUnassigned ? {} : { unassignedAt: null }) },
    include: { team: true },
    orderBy: [{ assignedAt: 'asc' }, { teamId: 'asc' }],
  });
}
