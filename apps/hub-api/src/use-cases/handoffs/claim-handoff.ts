import type { AgentActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { loadHandoffForAgent, transitionHandoff } from '../../data/handoffs.lifecycle';

/**
 * The assignee claims its handoff (`open | accepted → claimed`); an open handoff without an assignee is
 * claimed by — and assigned to — the first agent of the workspace that claims it.
 */
export function claimHandoff(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  requestId?: string,
): Promise<Handoff> {
  return transitionHandoff(
    deps,
    actor,
    () => loadHandoffForAgent(deps.db, actor, handoffId, { allowUnassigned: true }),
    'claim',
    { requestId },
  );
}
