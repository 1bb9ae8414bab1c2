import { unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import { CliError } from '../domain/cli-error';

export type HubAgent = HubApi.components['schemas']['Agent'];
export type NetworkHost = HubApi.components['schemas']['NetworkHost'];

/** The workspace's agent named `name`, or undefined (names are unique in a workspace). */
export async function findAgentByName(
  hub: HubClient,
  workspace: string,
  name: string,
): Promise<HubAgent | undefined> {
  const agents = unwrap(
    await hub.GET('/api/v1/workspaces/{workspace}/agents', { params: { path: { workspace } } }),
  );
  return agents.find((agent) => agent.name === name);
}

/** The agents the hub attributes to runtime host `hostId`. */
export async function listHostAgents(hub: HubClient, workspace: string, hostId: string): Promise<HubAgent[]> {
  return unwrap(
    await hub.GET('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace }, query: { runtime_instance_id: hostId } },
    }),
  );
}

/** The agent named `name` on runtime host `hostId`; a named error when it is unknown or on another host. */
export async function requireHostAgent(
  hub: HubClient,
  workspace: string,
  hostId: string,
  name: string,
): Promise<HubAgent> {
  const agent = await findAgentByName(hub, workspace, name);
  if (!agent) {
    throw new CliError({
      code: 'agent_not_found',
      message: `no agent named "${name}" in workspace ${workspace}`,
      fix: 'check the name with `svc list`',
    });
  }
  if (agent.runtime_instance_id !== hostId) {
    throw new CliError({
      code: 'agent_on_another_host',
      message: `agent "${name}" runs on runtime host ${agent.runtime_instance_id ?? '(none)'}, not on this host ${hostId}`,
      fix: "run the command on the agent's own runtime host",
    });
  }
  return agent;
}

/** The Networks view's entry of runtime host `hostId`, or undefined. */
export async function findNetworkHost(
  hub: HubClient,
  workspace: string,
  hostId: string,
): Promise<NetworkHost | undefined> {
  const view = unwrap(
    await hub.GET('/api/v1/workspaces/{workspace}/networks', { params: { path: { workspace } } }),
  );
  return view.hosts.find((host) => host.runtime_instance_id === hostId);
}
