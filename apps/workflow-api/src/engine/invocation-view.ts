import type { WorkflowApi } from '@svc/contracts';
import type { Db } from '../db';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';
import type { InvocationRoute } from '../use-cases/create-invocation';
import type { PreflightBlocker } from '../use-cases/preflight-intent';

type InvocationBody = WorkflowApi.components['schemas']['InvocationsInvocation'];
type StageBody = WorkflowApi.components['schemas']['InvocationsStage'];

const EMPTY_ROUTE: InvocationRoute = {
  matched: false,
  selection: 'resolved',
  contract_id: null,
  template_key: null,
  template_version: null,
  winner_reason: null,
};

export interface RunDetails {
  run: WorkflowRun | null;
  stages: RunStage[];
  artifact: Pick<Artifact, 'id' | 'schemaName' | 'schemaVersion' | 'createdAt'> | null;
}

export const NO_RUN: RunDetails = { run: null, stages: [], artifact: null };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentStage(stage: RunStage): StageBody {
  return {
    stage_id: stage.id,
    key: stage.key,
    title: stage.title,
    position: stage.position,
    state: stage.state as StageBody['state'],
    required_capabilities: (stage.requiredCapabilities as string[]) ?? [],
    owner_agent_id: stage.ownerAgentId,
    handoff_id: stage.handoffId,
    attempts: stage.attempts,
    blocker_reason: stage.blockerReason,
    progress: stage.progress,
    assigned_at: iso(stage.assignedAt),
    claimed_at: iso(stage.claimedAt),
    last_heartbeat_at: iso(stage.lastHeartbeatAt),
    completed_at: iso(stage.completedAt),
    duration_ms:
      stage.completedAt && stage.firstAssignedAt
        ? stage.completedAt.getTime() - stage.firstAssignedAt.getTime()
        : null,
  };
}

/** The wire shape of an invocation with its run's progress. */
export function presentInvocation(invocation: Invocation, details: RunDetails = NO_RUN): InvocationBody {
  const route = { ...EMPTY_ROUTE, ...((invocation.route as Partial<InvocationRoute> | null) ?? {}) };
  const stages = details.stages.map(presentStage);
  const current =
    invocation.state === 'completed'
      ? null
      : (stages.find((s) => s.state !== 'completed' && s.state !== 'skipped') ?? null);
  const handedOff = details.stages
    .filter((s) => s.handoffId && s.assignedAt)
    .sort((a, b) => b.assignedAt!.getTime() - a.assignedAt!.getTime())[0];
  return {
    invocation_id: invocation.id,
    project_id: invocation.projectId,
    state: invocation.state as InvocationBody['state'],
    attention: invocation.attention as InvocationBody['attention'],
    attention_reason: invocation.attentionReason,
    route,
    correlation_id: invocation.correlationId,
    created_at: invocation.createdAt.toISOString(),
    updated_at: invocation.updatedAt.toISOString(),
    run_id: details.run?.id ?? null,
    stages,
    current_stage: current,
    latest_handoff: handedOff
      ? {
          handoff_id: handedOff.handoffId!,
          stage_id: handedOff.id,
          stage_key: handedOff.key,
          assignee_agent_id: handedOff.ownerAgentId,
          created_at: handedOff.assignedAt!.toISOString(),
        }
      : null,
    artifact: details.artifact
      ? {
          artifact_id: details.artifact.id,
          schema_name: details.artifact.schemaName,
          schema_version: details.artifact.schemaVersion,
          created_at: details.artifact.createdAt.toISOString(),
        }
      : null,
    blockers: (invocation.blockers as unknown as PreflightBlocker[]) ?? [],
    approval: invocation.approvalRequired
      ? {
          required: true,
          decision: invocation.approvalDecision as 'approve' | 'reject' | null,
          decided_by: invocation.approvalBy,
          decided_at: iso(invocation.approvalAt),
          comment: invocation.approvalComment,
        }
      : null,
  };
}

/** Reads the run, stages and artifact identity of an invocation (three indexed reads). */
export async function loadRunDetails(
  db: Pick<Db, 'workflowRun' | 'runStage' | 'artifact'>,
  invocationId: string,
): Promise<RunDetails> {
  const [run, stages, artifact] = await Promise.all([
    db.workflowRun.findUnique({ where: { invocationId } }),
    db.runStage.findMany({ where: { invocationId }, orderBy: { position: 'asc' } }),
    db.artifact.findUnique({
      where: { invocationId },
      select: { id: true, schemaName: true, schemaVersion: true, createdAt: true },
    }),
  ]);
  return { run, stages, artifact };
}
