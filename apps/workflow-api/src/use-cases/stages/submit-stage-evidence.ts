import type { AgentActor } from '@svc/auth';
import { ownershipError } from '../../data/run-stage.ownership';
import { storeEvidence } from '../../data/stage-evidence.writer';
import type { EvidenceItem } from '../../data/stage-evidence.writer';
import type { WorkflowDeps } from '../../deps';
import type { StageEvidence } from '../../generated/prisma/client';

/** Evidence attached by the owner, redacted before it is stored. */
export async function submitStageEvidence(
  deps: WorkflowDeps,
  actor: AgentActor,
  stageId: string,
  input: EvidenceItem,
): Promise<StageEvidence> {
  const stage = await deps.db.runStage.findUnique({ where: { id: stageId } });
  const error = ownershipError(stage, actor, stageId);
  if (error) throw error;
  return storeEvidence(deps.db, stageId, actor.agentId, input);
}
