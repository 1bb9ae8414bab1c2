import { listAgentStates } from '../../data/agent-state';
import { listHostAgents } from '../../data/host-agents';
import { connectLocalRuntime, listSupervisedAgents } from '../../data/local-runtime';
import type { SupervisedAgent } from '../../data/local-runtime';
import { pulledHostId, requirePulledRuntime } from './host-context';
import type { HostContext } from './host-context';

export interface ListedAgent {
  agent_id: string;
  name: string;
  /** Hub status (`online`, `idle`, `busy`, `offline`, `evicted`). */
  status: string;
  runtime_instance_id: string | null;
  model: string | null;
  capabilities: string[];
  serve_port: number | null;
  console_url: string | null;
  last_heartbeat_at: string | null;
  /** The local supervisor's view; null when this runtime does not supervise the agent. */
  process: {
    state: SupervisedAgent['state'];
    pid: number | null;
    restarts: number;
    started_at: string;
    last_exit: SupervisedAgent['last_exit'];
    log_file: string;
  } | null;
  /** Local running state (0600 state file) exists for the agent. */
  local_state: boolean;
}

export interface ListAgentsResult {
  runtime_instance_id: string;
  runtime_running: boolean;
  agents: ListedAgent[];
}

/**
 * `svc list`: the agents the hub attributes to this host, merged with the local supervisor's processes and
 * local state. The console URL is the pulled `consoleRouter.publicBaseUrl` plus the agent's route and
 * `/global/health`.
 */
export async function listAgents(input: HostContext): Promise<ListAgentsResult> {
  const runtime = requirePulledRuntime(input.profile);
  const hostId = pulledHostId(input.profile);
  const [atHub, local, states] = await Promise.all([
    listHostAgents(input.hub, input.workspace, hostId),
    connectLocalRuntime(input.stateDir),
    listAgentStates(input.stateDir),
  ]);
  const supervised = local.running ? await listSupervisedAgents(local.client) : [];
  const byName = new Map(supervised.map((s) => [s.name, s]));
  const withState = new Set(states.map((s) => s.name));
  const base = runtime.consoleRouter.publicBaseUrl.replace(/\/+$/, '');
  const agents = atHub.map((agent): ListedAgent => {
    const proc = byName.get(agent.name);
    const route = agent.console_route ?? `/${input.workspace}/agents/${agent.id}`;
    return {
      agent_id: agent.id,
      name: agent.name,
      status: agent.status,
      runtime_instance_id: agent.runtime_instance_id,
      model: agent.model,
      capabilities: agent.capabilities,
      serve_port: proc?.serve_port ?? agent.serve_port,
      console_url: agent.serve_port !== null ? `${base}${route}/global/health` : null,
      last_heartbeat_at: agent.last_heartbeat_at,
      process: proc
        ? {
            state: proc.state,
            pid: proc.pid,
            restarts: proc.restarts,
            started_at: proc.started_at,
            last_exit: proc.last_exit,
            log_file: proc.log_file,
          }
        : null,
      local_state: withState.has(agent.name),
    };
  });
  return { runtime_instance_id: hostId, runtime_running: local.running, agents };
}
