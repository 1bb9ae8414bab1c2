import type { AgentActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { loadHandoffForAgent, transitionHandoff } from '../../data/handoffs.lifecycle';

/** The assignee clears its blocker: `blocked → claimed`, the reason is cleared. */
export function unblockHandoff(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  requestId?: string,
): Promise<Handoff> {
  return transitionHandoff(deps, actor, () => loadHandoffForAgent(deps.db, actor, handoffId), 'unblock', {
    requestId,
  });
}
