import type { AgentActor } from '@svc/auth';
import { newId, redactValue } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Handoff } from '../../generated/prisma/client';
import { loadHandoffForAgent, transitionHandoff } from '../../data/handoffs.lifecycle';
import { COMPLETION_SUMMARY_KIND } from '../../domain/handoff-evidence';

/**
 * The assignee completes its claimed handoff (`claimed → completed`). A summary is stored, redacted like
 * any evidence, as evidence of kind `completion_summary` in the same transaction.
 */
export function completeHandoff(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  input: { summary?: string; requestId?: string },
): Promise<Handoff> {
  const { summary } = input;
  return transitionHandoff(deps, actor, () => loadHandoffForAgent(deps.db, actor, handoffId), 'complete', {
    requestId: input.requestId,
    auditData: { has_summary: summary !== undefined },
    after: async (tx, handoff) => {
      if (summary === undefined) return;
      await tx.handoffEvidence.create({
        data: {
          id: newId('hev'),
          handoffId: handoff.id,
          agentId: actor.agentId,
          kind: COMPLETION_SUMMARY_KIND,
          content: redactValue({ summary }) as { summary: string },
          createdAt: deps.now(),
        },
      });
    },
  });
}
