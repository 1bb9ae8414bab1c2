import { decodeTokenFacts, TokenDecodeError } from '../../domain/token-claims';
import type { TokenFacts } from '../../domain/token-claims';
import { CliError } from '../../domain/cli-error';
import { requireAgentState } from './require-agent-state';

export interface AgentTokenInfo {
  name: string;
  agent_id: string;
  token: TokenFacts;
  /** The runtime credential the agent was started with: facts only, never the token. */
  runtime_credential: {
    expires_at: string;
    expired: boolean;
    provider: string;
    model: string;
    authorization_source: string;
  } | null;
}

/** `svc token info`: what the agent's AGENT_TOKEN says about itself, decoded locally (never printed). */
export async function describeAgentToken(
  stateDir: string,
  name: string,
  now = Date.now(),
): Promise<AgentTokenInfo> {
  const state = await requireAgentState(stateDir, name);
  let token: TokenFacts;
  try {
    token = decodeTokenFacts(state.agent_token, now);
  } catch (error) {
    if (!(error instanceof TokenDecodeError)) throw error;
    throw new CliError({
      code: 'agent_token_unreadable',
      message: `the AGENT_TOKEN of "${name}" in its local state ${error.message}`,
      fix: `start the agent again: svc stop ${name}, then svc start --name ${name} …`,
    });
  }
  const rc = state.runtime_credential;
  return {
    name: state.name,
    agent_id: state.agent_id,
    token,
    runtime_credential: rc
      ? {
          expires_at: rc.expires_at,
          expired: Date.parse(rc.expires_at) <= now,
          provider: rc.provider,
          model: rc.model,
          authorization_source: rc.authorization_source,
        }
      : null,
  };
}
