import type { AgentActor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { loadHandoffForAgent, transitionHandoff } from '../../data/handoffs.lifecycle';

/**
 * The assignee reports a blocker (`accepted | claimed → blocked`). The blocked status with its reason is
 * the attention signal the workflow engine reads for the stage the handoff stands for.
 */
export function blockHandoff(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  input: { reason: string; requestId?: string },
): Promise<Handoff> {
  const reason = input.reason.trim();
  return transitionHandoff(deps, actor, () => loadHandoffForAgent(deps.db, actor, handoffId), 'block', {
    requestId: input.requestId,
    data: { blockerReason: reason },
    auditData: { reason },
  });
}
