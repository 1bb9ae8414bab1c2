import type { Db } from '../db';
import { peersByAgent } from '../domain/peer-rule';
import type { ActiveTeamAssignment } from '../domain/peer-rule';

type PolicyDb = Pick<Db, 'agent' | 'projectTeam'>;

/** The active project assignments (`unassigned_at` null) of the given teams, on projects of the workspace. */
export async function activeTeamAssignments(
  db: Pick<Db, 'projectTeam'>,
  workspaceId: string,
  teamIds: Iterable<string>,
): Promise<ActiveTeamAssignment[]> {
  const teams = [...new Set(teamIds)];
  if (teams.length === 0) return [];
  return db.projectTeam.findMany({
    where: { teamId: { in: teams }, unassignedAt: null, project: { workspaceId } },
    select: { projectId: true, teamId: true },
  });
}

/**
 * Whether one agent may message another in a workspace: the peer rule of `domain/peer-rule.ts` (the caller
 * is the target, or both share a team membership or an active project assignment in the workspace).
 */
export async function agentsMayTalk(
  db: PolicyDb,
  workspaceId: string,
  fromAgentId: string,
  toAgentId: string,
): Promise<boolean> {
  if (fromAgentId === toAgentId) return true;
  const agents = await db.agent.findMany({
    where: { id: { in: [fromAgentId, toAgentId] }, workspaceId },
    select: { id: true, projectId: true, teams: { select: { teamId: true } } },
  });
  if (agents.length !== 2) return false;
  const rows = agents.map((a) => ({
    id: a.id,
    projectId: a.projectId,
    teamIds: a.teams.map((t) => t.teamId),
  }));
  const assignments = await activeTeamAssignments(
    db,
    workspaceId,
    rows.flatMap((a) => a.teamIds),
  );
  return peersByAgent(rows, assignments).get(fromAgentId)?.includes(toAgentId) ?? false;
}
