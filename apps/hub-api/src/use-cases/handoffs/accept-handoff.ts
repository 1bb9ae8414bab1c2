import type { AgentActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { loadHandoffForAgent, transitionHandoff } from '../../data/handoffs.lifecycle';

/** The assignee accepts its handoff: `open → accepted`. */
export function acceptHandoff(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  requestId?: string,
): Promise<Handoff> {
  return transitionHandoff(deps, actor, () => loadHandoffForAgent(deps.db, actor, handoffId), 'accept', {
    requestId,
  });
}
