import { createHubClient, unwrap } from '@svc/contracts';
import type { RuntimeControlApi } from '@svc/contracts';
import { writeAgentState } from '../../data/agent-state';
import { controlSocketPath, createRuntimeControlClient } from '../../data/runtime-control-client';
import type { RuntimeControlClient } from '../../data/runtime-control-client';
import { CliError } from '../../domain/cli-error';
import { requireAgentState } from './require-agent-state';

type SupervisedAgent = RuntimeControlApi.components['schemas']['SupervisedAgent'];

export interface AgentTokenRefreshResult {
  name: string;
  agent_id: string;
  previous_expires_at: string;
  expires_at: string;
  /** Whether `svc runtime up` on this host supervises the agent's process. */
  supervised: boolean;
  /** Whether the supervised process was restarted with the new token. */
  restarted: boolean;
  /** The process id after the restart (null when not restarted). */
  pid: number | null;
  note: string;
}

async function supervisedAgent(
  control: RuntimeControlClient,
  name: string,
): Promise<SupervisedAgent | undefined> {
  try {
    const res = await control.GET('/agents/{name}', { params: { path: { name } } });
    return res.response.ok && res.data ? res.data.data : undefined;
  } catch {
    return undefined; // no runtime listening on this profile's control socket
  }
}

/**
 * `svc token refresh`: exchanges the agent's current AGENT_TOKEN for a new one at the hub and stores it in the
 * agent's local state (0600). When this host's runtime supervises the agent, its process is restarted through
 * the control API with AGENT_TOKEN replaced (`set_env`) and the rest of its environment kept by the runtime.
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
  const base = {
    name: state.name,
    agent_id: state.agent_id,
    previous_expires_at: state.agent_token_expires_at,
    expires_at: refreshed.agent_token_expires_at,
  };
  const control = createRuntimeControlClient(controlSocketPath(input.stateDir), 60_000);
  const supervised = await supervisedAgent(control, input.name);
  if (!supervised) {
    return {
      ...base,
      supervised: false,
      restarted: false,
      pid: null,
      note: 'no runtime on this host supervises the agent; the new token is in its local state',
    };
  }
  // Only AGENT_TOKEN changes: the runtime keeps the rest of the agent's environment (the control API never
  // hands it back, it holds secrets).
  const restart = await control.POST('/agents/{name}/restart', {
    params: { path: { name: input.name } },
    body: { set_env: { AGENT_TOKEN: refreshed.agent_token } },
  });
  if (!restart.response.ok || !restart.data) {
    const problem = restart.error as { code?: string; detail?: string } | undefined;
    throw new CliError({
      code: 'agent_restart_failed',
      message:
        `the new token is stored, but the runtime did not restart ${input.name}: ` +
        `${problem?.code ?? `HTTP ${restart.response.status}`}${problem?.detail ? ` ${problem.detail}` : ''}`,
      fix: `check the agent with svc internal status; the previous token stays valid until ${state.agent_token_expires_at}`,
    });
  }
  return {
    ...base,
    supervised: true,
    restarted: true,
    pid: restart.data.data.pid,
    note: 'the runtime restarted the agent with the new token',
  };
}
