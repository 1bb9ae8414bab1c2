import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import type { Clients } from '../../app/api';

type Schemas = HubApi.components['schemas'];
export type Agent = Schemas['Agent'];
export type AgentStatus = Schemas['AgentStatus'];
export type NetworkHost = Schemas['NetworkHost'];
export type Project = Schemas['Project'];
export type Team = Schemas['Team'];
export type TeamDetail = Schemas['TeamDetail'];

/** Running states: the agent holds a live process and may answer on its console. */
export const RUNNING: readonly AgentStatus[] = ['online', 'idle', 'busy'];

/** Everything the agents list shows next to each agent: its host, project and teams by id. */
export interface AgentsView {
  agents: Agent[];
  hosts: Map<string, NetworkHost>;
  projects: Map<string, Project>;
  /** Team names of each agent, by agent id. */
  teamsOf: Map<string, string[]>;
}

/**
 * Loads the agents of a workspace with the Networks view (hosts, their console URLs and spawn readiness),
 * the projects and the teams' members, in parallel; one request per team for its members.
 */
export async function loadAgentsView(
  { hub }: Clients,
  workspace: string,
  signal: AbortSignal,
): Promise<AgentsView> {
  const path = { workspace };
  const [agents, networks, projects, teams] = await Promise.all([
    hub.raw.GET('/api/v1/workspaces/{workspace}/agents', { params: { path }, signal }).then(unwrap),
    hub.raw.GET('/api/v1/workspaces/{workspace}/networks', { params: { path }, signal }).then(unwrap),
    hub.raw.GET('/api/v1/workspaces/{workspace}/projects', { params: { path }, signal }).then(unwrap),
    hub.raw.GET('/api/v1/workspaces/{workspace}/teams', { params: { path }, signal }).then(unwrap),
  ]);
  const details = await Promise.all(
    teams.map((team) =>
      hub.raw.GET('/api/v1/teams/{teamId}', { params: { path: { teamId: team.id } }, signal }).then(unwrap),
    ),
  );
  const teamsOf = new Map<string, string[]>();
  for (const team of details) {
    for (const member of team.agents)
      teamsOf.set(member.agent_id, [...(teamsOf.get(member.agent_id) ?? []), team.name]);
  }
  return {
    agents,
    hosts: new Map(networks.hosts.map((host) => [host.runtime_instance_id, host])),
    projects: new Map(projects.map((project) => [project.id, project])),
    teamsOf,
  };
}

/**
 * The agent's console address on its host's console router (`{console_public_base_url}{console_route}`), or
 * undefined when the agent has no console route or its host is unknown.
 */
export function consoleUrlOf(agent: Agent, host: NetworkHost | undefined): string | undefined {
  if (!agent.console_route || !host?.console_public_base_url) return undefined;
  return `${host.console_public_base_url.replace(/\/+$/, '')}${agent.console_route}`;
}
