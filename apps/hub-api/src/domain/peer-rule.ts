/**
 * The spec's peer rule: an agent may message (and open the console of) another agent of its workspace when
 * it is that agent, or when both share a team membership or an active project assignment.
 *
 * An agent's active projects are its own `project_id` plus every project one of its teams is assigned to and
 * not unassigned from. Two agents share an active project assignment when those sets meet, which covers both
 * teams on one project, one agent's own project being the other's team project, and both naming one project.
 */

/** What the rule reads of an agent. */
export interface PeerRuleAgent {
  id: string;
  projectId: string | null;
  teamIds: readonly string[];
}

/** An active assignment (`unassigned_at` null) of a team to a project of the workspace. */
export interface ActiveTeamAssignment {
  projectId: string;
  teamId: string;
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The teams and active projects that connect an agent to others, as keys of one namespace. */
function groupsOf(agent: PeerRuleAgent, projectsByTeam: ReadonlyMap<string, readonly string[]>): Set<string> {
  const groups = new Set<string>();
  for (const teamId of agent.teamIds) {
    groups.add(`team:${teamId}`);
    for (const projectId of projectsByTeam.get(teamId) ?? []) groups.add(`project:${projectId}`);
  }
  if (agent.projectId) groups.add(`project:${agent.projectId}`);
  return groups;
}

/**
 * For every agent, the other agents among `agents` it shares a team or an active project with (sorted ids;
 * the agent itself is left out, since it always may). All agents must belong to one workspace, and
 * `assignments` must hold the active assignments of their teams. Linear in the number of memberships plus
 * the size of the answer: agents are grouped by team and project once, not compared pair by pair.
 */
export function peersByAgent(
  agents: readonly PeerRuleAgent[],
  assignments: readonly ActiveTeamAssignment[],
): Map<string, string[]> {
  const projectsByTeam = new Map<string, string[]>();
  for (const { teamId, projectId } of assignments) append(projectsByTeam, teamId, projectId);
  const groupsByAgent = new Map(agents.map((agent) => [agent.id, groupsOf(agent, projectsByTeam)]));
  const members = new Map<string, string[]>();
  for (const [agentId, groups] of groupsByAgent) {
    for (const group of groups) append(members, group, agentId);
  }
  const peers = new Map<string, string[]>();
  for (const [agentId, groups] of groupsByAgent) {
    const reachable = new Set<string>();
    for (const group of groups) for (const other of members.get(group) ?? []) reachable.add(other);
    reachable.delete(agentId);
    peers.set(agentId, [...reachable].sort());
  }
  return peers;
}
