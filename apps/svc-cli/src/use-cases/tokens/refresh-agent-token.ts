import { createHubClient, unwrap } from '@svc/contracts';
import { writeAgentState } from '../../data/agent-state';
import { controlSocketPath, createRuntimeControlClient } from '../../data/runtime-control-client';
import { requireAgentState } from './require-agent-state';

export interface AgentTokenRefreshResult {
  name: string;
  agent_id: string;
  previous_expires_at: string;
  expires_at: string;
  /** Whether `svc runtime up` on this host supervises the agent's process. */
  supervised: boolean;
  /** Whether the process was restarted with the new token (see `note`). */
  restarted: boolean;
  note: string;
}

async function isSupervised(stateDir: string, name: string): Promise<boolean> {
  try {
    const control = createRuntimeControlClient(controlSocketPath(stateDir), 5_000);
    const res = await control.GET('/agents/{name}', { params: { path: { name } } });
    return res.response.ok;
  } catch {
    return false; // no runtime listening on this profile's control socket
  }
}

/**
 * `svc token refresh`: exchanges the agent's current AGENT_TOKEN for a new one at the hub and stores it in the
 * agent's local state (0600). The previous token stays valid until it expires (the hub's rule), so a running
 * process is not interrupted. A supervised process is not restarted here: the control API's restart replaces
 * the agent's whole environment, which only `svc start` composes (console proxy key, provider auth file,
 * runtime credential); restarting with a partial environment would break the agent.
 */
export async function refreshAgentToken(input: {
  stateDir: string;
  name: string;
  hubUrl: string;
  clientName: string;
}): Promise<AgentTokenRefreshResult> {
  const state = await requireAgentState(input.stateDir, input.name);
  const hub = createHubClient({
    baseUrl: input.hubUrl,
    token: state.agent_token,
    clientName: input.clientName,
  });
  const refreshed = unwrap(await hub.POST('/api/v1/agents/me/token'));
  await writeAgentState(input.stateDir, {
    ...state,
    agent_token: refreshed.agent_token,
    agent_token_expires_at: refreshed.agent_token_expires_at,
  });
  const supervised = await isSupervised(input.stateDir, input.name);
  return {
    name: state.name,
    agent_id: state.agent_id,
    previous_expires_at: state.agent_token_expires_at,
    expires_at: refreshed.agent_token_expires_at,
    supervised,
    restarted: false,
    note: supervised
      ? `the running process keeps its current token, valid until ${state.agent_token_expires_at}; ` +
        `svc commands on this host use the new one`
      : 'no runtime on this host supervises the agent; svc commands on this host use the new token',
  };
}
