import type { AgentActor } from '@svc/auth';
import { newId, redactValue } from '@svc/service-kit';
import { ownershipError } from '../../data/run-stage.ownership';
import type { WorkflowDeps } from '../../deps';
import type { StageEvidence } from '../../generated/prisma/client';

/** Evidence attached by the owner, redacted before it is stored. */
export async function submitStageEvidence(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  input: { kind: string; content: unknown },
): Promise<StageEvidence> {
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  return deps.db.stageEvidence.create({
    data: {
      id: newId('evd'),
      stageId,
      agentId: actor.agentId,
      kind: input.kind,
      content: (redactValue(input.content ?? null) ?? null) as never,
    },
  });
}
