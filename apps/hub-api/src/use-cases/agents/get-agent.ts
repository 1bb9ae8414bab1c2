import type { Actor } from '@svc/auth';
import { findAgentFor } from '../../data/agents.lookups';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';

/** An agent the actor can see; an agent of another workspace, or a missing one, is not found. */
export function getAgent(deps: HubDeps, actor: Actor | undefined, agentId: string): Promise<Agent> {
  return findAgentFor(deps, actor, agentId);
}
