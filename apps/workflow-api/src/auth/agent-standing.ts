import { createHash } from 'node:crypto';
import type { HubClient } from '@svc/contracts';
import { AppError } from '@svc/service-kit';

/** How long the hub's word that an agent is not evicted is trusted when no notice says otherwise. */
export const AGENT_STANDING_TTL_MS = 30_000;
/**
 * The longest an agent token can live (the hub's `HUB_AGENT_TOKEN_TTL_SECONDS` allows at most a day): a deny
 * entry is never kept longer, whatever a notice says.
 */
export const AGENT_TOKEN_MAX_LIFETIME_MS = 86_400_000;
/** Agents denied at most at once; when full, the entry that expires first goes (the standing check remains). */
export const AGENT_DENY_MAX_ENTRIES = 100_000;
/** Agents whose standing is remembered at most at once; when full, the oldest goes. */
const STANDING_MAX_ENTRIES = 10_000;

export interface AgentStanding {
  /**
   * Whether a token of this agent (already verified against the hub's keys) may be used now. Refused when
   * the hub announced the agent's eviction or deletion, or when the hub refuses the token on a check, made
   * at most once per `ttlMs` per agent. A hub that does not answer is a 503 `hub_unavailable`.
   */
  admits(agentId: string, token: string, tokenExpiresAtMs: number): Promise<boolean>;
  /** The hub announced the agent's eviction or deletion: its tokens are refused until `untilMs`. */
  revoke(agentId: string, untilMs: number): void;
  /** Agents denied right now (for tests and metrics). */
  readonly deniedCount: number;
}

/** Asks the hub whether a token's agent is still what the token says (the hub reads the agent's row). */
export type AgentStandingCheck = (token: string) => Promise<'active' | 'refused'>;

const unavailable = (cause?: unknown) =>
  new AppError({
    status: 503,
    code: 'hub_unavailable',
    detail: 'Credentials cannot be checked right now; try again shortly.',
    cause,
  });

/**
 * The hub's own check of an agent token: `GET /api/v1/agents/me` with the token itself, which the hub
 * answers 401 when the agent is evicted or deleted. The token goes only to the hub that issued it.
 */
export function hubAgentStandingCheck(hub: HubClient): AgentStandingCheck {
  return async (token) => {
    let result;
    try {
      result = await hub.GET('/api/v1/agents/me', {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(5_000),
      });
    } catch (error) {
      throw unavailable(error);
    }
    if (result.response.status === 401) return 'refused';
    if (!result.data) throw unavailable(new Error(`agent check answered HTTP ${result.response.status}`));
    return result.data.data.status === 'evicted' ? 'refused' : 'active';
  };
}

/**
 * Which agents' tokens this Workflow API still accepts (decision 60). Agent tokens are verified locally
 * against the hub's keys; what the signature cannot say (the agent was evicted or deleted since) comes from
 * two places:
 * - the hub's notice (Redis pub/sub, within a second): the agent id goes into a bounded deny set until the
 *   latest expiry of its tokens, so every token issued before the eviction is refused while it could be valid;
 * - the hub itself, when the notice was lost: an agent's standing is asked of the hub at most once per
 *   `ttlMs` (30 s) per agent, concurrent requests with one token sharing one call; a token the hub refuses is refused here
 *   until it expires (by its digest, never the token itself).
 */
export function createAgentStanding(options: {
  check?: AgentStandingCheck;
  ttlMs?: number;
  now?: () => number;
  maxDenied?: number;
}): AgentStanding {
  const now = options.now ?? Date.now;
  const ttlMs = options.ttlMs ?? AGENT_STANDING_TTL_MS;
  const maxDenied = options.maxDenied ?? AGENT_DENY_MAX_ENTRIES;
  /** Agent id → until when its tokens are refused. Kept in order of expiry (notices arrive in time order). */
  const denied = new Map<string, number>();
  /** Agent id → until when the hub's last "active" holds. */
  const standing = new Map<string, number>();
  /** Token digest → its expiry, for tokens the hub refused. */
  const refusedTokens = new Map<string, number>();
  const inflight = new Map<string, Promise<'active' | 'refused'>>();
  const digest = (token: string) => createHash('sha256').update(token).digest('hex');

  function isDenied(agentId: string): boolean {
    const until = denied.get(agentId);
    if (until === undefined) return false;
    if (until > now()) return true;
    denied.delete(agentId);
    return false;
  }

  function remember<V>(map: Map<string, V>, key: string, value: V, max: number): void {
    map.delete(key);
    if (map.size >= max) map.delete(map.keys().next().value as string);
    map.set(key, value);
  }

  return {
    async admits(agentId, token, tokenExpiresAtMs) {
      if (isDenied(agentId)) return false;
      const t = now();
      const confirmedUntil = standing.get(agentId);
      if (confirmedUntil !== undefined && confirmedUntil > t) return true;
      if (!options.check) return true;
      const id = digest(token);
      const refusedUntil = refusedTokens.get(id);
      if (refusedUntil !== undefined) {
        if (refusedUntil > t) return false;
        refusedTokens.delete(id);
      }
      let pending = inflight.get(id);
      if (!pending) {
        pending = options.check(token).finally(() => inflight.delete(id));
        inflight.set(id, pending);
      }
      const answer = await pending;
      // A notice that arrived while the hub was asked wins over its answer.
      if (isDenied(agentId)) return false;
      if (answer === 'active') {
        remember(standing, agentId, t + ttlMs, STANDING_MAX_ENTRIES);
        return true;
      }
      // The hub refused this token (the agent is gone, or the token is no longer one the hub accepts); the
      // agent id itself is only denied on the hub's notice, so a refreshed token is asked about afresh.
      standing.delete(agentId);
      remember(refusedTokens, id, tokenExpiresAtMs, STANDING_MAX_ENTRIES);
      return false;
    },
    revoke(agentId, untilMs) {
      const until = Math.min(untilMs, now() + AGENT_TOKEN_MAX_LIFETIME_MS);
      standing.delete(agentId);
      if (until <= now()) return;
      if (!denied.has(agentId) && denied.size >= maxDenied) {
        // Full: the entry that expires first goes; that agent falls back to the standing check.
        let first: string | undefined;
        let firstUntil = Infinity;
        for (const [id, u] of denied) {
          if (u < firstUntil) {
            first = id;
            firstUntil = u;
          }
          if (u <= now()) denied.delete(id);
        }
        if (denied.size >= maxDenied && first !== undefined) denied.delete(first);
      }
      denied.set(agentId, Math.max(until, denied.get(agentId) ?? 0));
    },
    get deniedCount() {
      for (const [id, u] of denied) if (u <= now()) denied.delete(id);
      return denied.size;
    },
  };
}
