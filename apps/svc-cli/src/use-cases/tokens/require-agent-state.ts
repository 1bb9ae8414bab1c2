import { readAgentState } from '../../data/agent-state';
import type { AgentLocalState } from '../../data/agent-state';
import { CliError } from '../../domain/cli-error';

/** The agent's local state on this host, or the named error `agent_not_started_here` with the fix. */
export async function requireAgentState(stateDir: string, name: string): Promise<AgentLocalState> {
  const state = await readAgentState(stateDir, name);
  if (!state) {
    throw new CliError({
      code: 'agent_not_started_here',
      message: `agent "${name}" has no local state on this host (profile state in ${stateDir})`,
      fix: `start it on this host with svc start --name ${name} …, or use the --profile it was started with`,
      details: { name },
    });
  }
  return state;
}
