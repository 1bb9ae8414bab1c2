import { unwrap } from '@svc/contracts';
import { clearAgentState, readAgentState } from '../../data/agent-state';
import { requireHostAgent } from '../../data/host-agents';
import { connectLocalRuntime, stopSupervisedAgent } from '../../data/local-runtime';
import { checkAgentName } from '../../domain/direct-start-rules';
import { pulledHostId } from './host-context';
import type { HostContext } from './host-context';

export interface StopAgentResult {
  agent_id: string;
  name: string;
  /** The agent id is kept at the hub: `svc start --name <name>` starts the same agent again. */
  agent_id_kept: true;
  status: string;
  /** The supervised process was stopped (false: this runtime did not run it, or the runtime is not up). */
  process_stopped: boolean;
  pid: number | null;
  local_state_cleared: boolean;
  /** This platform runs agents as plain processes: there is never a sandbox container to remove. */
  sandbox_removed: false;
  runtime_running: boolean;
}

/**
 * `svc stop <agent>` (spec, Agent states: local stop): stops the supervised process, marks the agent stopped
 * (`offline`) at the hub, clears its local running state and keeps its id. Stopping an agent that is not
 * running is harmless; an unknown name is an error.
 */
export async function stopAgent(input: HostContext & { name: string }): Promise<StopAgentResult> {
  const name = checkAgentName(input.name);
  const hostId = pulledHostId(input.profile);
  const agent = await requireHostAgent(input.hub, input.workspace, hostId, name);

  const local = await connectLocalRuntime(input.stateDir);
  const stopped = local.running ? await stopSupervisedAgent(local.client, name) : undefined;
  const atHub =
    agent.status === 'evicted'
      ? agent
      : unwrap(
          await input.hub.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId: agent.id } } }),
        );
  const hadState = (await readAgentState(input.stateDir, name)) !== undefined;
  await clearAgentState(input.stateDir, name);
  return {
    agent_id: agent.id,
    name,
    agent_id_kept: true,
    status: atHub.status,
    process_stopped: stopped !== undefined,
    pid: stopped?.pid ?? null,
    local_state_cleared: hadState,
    sandbox_removed: false,
    runtime_running: local.running,
  };
}
