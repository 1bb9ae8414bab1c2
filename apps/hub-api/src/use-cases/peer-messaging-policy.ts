import type { Db } from '../db';

type PolicyDb = Pick<Db, 'agent' | 'projectTeam'>;

/**
 * Whether one agent may message another in a workspace (spec: "allowed when the caller is the target
 * agent, or when both agents share a team membership or an active project assignment in the workspace").
 *
 * An agent's active projects are its own `project_id` plus every project one of its teams is assigned to
 * and not unassigned from (`unassigned_at` null). Two agents share an active project assignment when those
 * sets meet, which covers both teams on one project, one agent's own project being the other's team
 * project, and both agents naming the same project.
 */
export async function agentsMayTalk(
  db: PolicyDb,
  workspaceId: string,
  fromAgentId: string,
  toAgentId: string,
): Promise<boolean> {
  if (fromAgentId === toAgentId) return true;
  const select = { workspaceId: true, projectId: true, teams: { select: { teamId: true } } } as const;
  const [from, to] = await Promise.all([
    db.agent.findUnique({ where: { id: fromAgentId }, select }),
    db.agent.findUnique({ where: { id: toAgentId }, select }),
  ]);
  if (!from || !to || from.workspaceId !== workspaceId || to.workspaceId !== workspaceId) return false;

  const fromTeams = new Set(from.teams.map((t) => t.teamId));
  const toTeams = new Set(to.teams.map((t) => t.teamId));
  for (const team of toTeams) if (fromTeams.has(team)) return true;

  const assignments =
    fromTeams.size + toTeams.size === 0
      ? []
      : await db.projectTeam.findMany({
          where: {
            teamId: { in: [...fromTeams, ...toTeams] },
            unassignedAt: null,
            project: { workspaceId },
          },
          select: { projectId: true, teamId: true },
        });
  const activeProjects = (teams: Set<string>, own: string | null) => {
    const projects = new Set(assignments.filter((a) => teams.has(a.teamId)).map((a) => a.projectId));
    if (own) projects.add(own);
    return projects;
  };
  const fromProjects = activeProjects(fromTeams, from.projectId);
  for (const project of activeProjects(toTeams, to.projectId)) if (fromProjects.has(project)) return true;
  return false;
}
