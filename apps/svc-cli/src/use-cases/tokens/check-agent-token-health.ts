import { createHubClient } from '@svc/contracts';
import { decodeTokenFacts, TokenDecodeError } from '../../domain/token-claims';
import { requireAgentState } from './require-agent-state';

export type AgentTokenHealth = 'valid' | 'expired' | 'revoked';

export interface AgentTokenHealthResult {
  name: string;
  agent_id: string;
  health: AgentTokenHealth;
  expires_at: string | null;
  /** The hub's answer to `GET /api/v1/agents/me` (null when the token had expired and was not sent). */
  hub_status: number | null;
  /** The hub's problem code when it refused the token. */
  hub_code: string | null;
  /** The agent's status at the hub, when the token is valid. */
  agent_status: string | null;
}

/**
 * `svc token health`: asks the hub who the token belongs to (`GET /api/v1/agents/me`). `valid` when the hub
 * accepts it; `expired` when its expiry has passed; `revoked` when the hub refuses it before then (the agent was
 * evicted or deleted, or the hub's signing keys changed).
 */
export async function checkAgentTokenHealth(input: {
  stateDir: string;
  name: string;
  hubUrl: string;
  clientName: string;
}): Promise<AgentTokenHealthResult> {
  const state = await requireAgentState(input.stateDir, input.name);
  let expiresAt: string | null = state.agent_token_expires_at ?? null;
  let expired = expiresAt !== null && Date.parse(expiresAt) <= Date.now();
  try {
    const facts = decodeTokenFacts(state.agent_token);
    expiresAt = facts.expires_at ?? expiresAt;
    expired = facts.expired;
  } catch (error) {
    if (!(error instanceof TokenDecodeError)) throw error;
  }
  const base = { name: state.name, agent_id: state.agent_id, expires_at: expiresAt };
  if (expired) return { ...base, health: 'expired', hub_status: null, hub_code: null, agent_status: null };
  const hub = createHubClient({
    baseUrl: input.hubUrl,
    token: state.agent_token,
    clientName: input.clientName,
  });
  const res = await hub.GET('/api/v1/agents/me');
  if (res.response.ok && res.data) {
    return {
      ...base,
      health: 'valid',
      hub_status: res.response.status,
      hub_code: null,
      agent_status: res.data.data.status,
    };
  }
  const code = (res.error as { code?: string } | undefined)?.code ?? null;
  if (res.response.status === 401 || res.response.status === 403) {
    const nowExpired = expiresAt !== null && Date.parse(expiresAt) <= Date.now();
    return {
      ...base,
      health: nowExpired ? 'expired' : 'revoked',
      hub_status: res.response.status,
      hub_code: code,
      agent_status: null,
    };
  }
  // Anything else is not a verdict on the token: report it as the failure it is.
  throw Object.assign(
    new Error(`GET /api/v1/agents/me answered HTTP ${res.response.status}${code ? ` (${code})` : ''}`),
    {
      name: 'HubUnavailable',
    },
  );
}
