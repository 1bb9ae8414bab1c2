import type { Actor } from '@svc/auth';
import { findSelfAgent } from '../../data/agents.lookups';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';

/** The calling agent's own row (with its own AGENT_TOKEN only). */
export function getAgentSelf(deps: HubDeps, actor: Actor | undefined): Promise<Agent> {
  return findSelfAgent(deps, actor);
}
