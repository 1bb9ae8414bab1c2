import { ownerSpawnView } from '../domain/owner-spawn';
import type { WorkflowApi } from '@svc/contracts';
import type { RunDetails } from '../data/run-details.lookups';
import { withEffect } from '../domain/blockers';
import type { Blocker } from '../domain/blockers';
import type { InvocationRoute } from '../domain/invocation-request';
import type { Invocation, RunStage } from '../generated/prisma/client';

type InvocationBody = WorkflowApi.components['schemas']['InvocationsInvocation'];
type StageBody = WorkflowApi.components['schemas']['InvocationsStage'];
type SummaryBody = WorkflowApi.components['schemas']['InvocationsInvocationSummary'];
type FailureBody = WorkflowApi.components['schemas']['InvocationsFailure'];
type CancellationBody = WorkflowApi.components['schemas']['InvocationsCancellation'];

const EMPTY_ROUTE: InvocationRoute = {
  matched: false,
  selection: 'resolved',
  contract_id: null,
  template_key: null,
  template_version: null,
  winner_reason: null,
};

const NO_RUN: RunDetails = { run: null, stages: [], artifact: null, retriedAs: [] };

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
    owner_spawn: ownerSpawnView(stage.ownerSpawn),
  };
}

function normalizedIntentOf(invocation: Invocation): string {
  return String((invocation.request as { intent?: unknown } | null)?.intent ?? '');
}

/** The fields a listed invocation and a read one share. */
function presentCommon(invocation: Invocation) {
  return {
    invocation_id: invocation.id,
    project_id: invocation.projectId,
    intent: invocation.intent,
    state: invocation.state as SummaryBody['state'],
    attention: invocation.attention as SummaryBody['attention'],
    attention_reason: invocation.attentionReason,
    route: { ...EMPTY_ROUTE, ...((invocation.route as Partial<InvocationRoute> | null) ?? {}) },
    correlation_id: invocation.correlationId,
    failure: (invocation.failure as FailureBody | null) ?? null,
    cancellation: (invocation.cancellation as CancellationBody | null) ?? null,
    retry_of: invocation.retryOf,
    created_at: invocation.createdAt.toISOString(),
    updated_at: invocation.updatedAt.toISOString(),
  };
}

/** An invocation as a list shows it (no stages). */
export function presentInvocationSummary(invocation: Invocation): SummaryBody {
  return presentCommon(invocation);
}

/** The wire shape of an invocation with its run's progress. */
export function presentInvocation(invocation: Invocation, details: RunDetails = NO_RUN): InvocationBody {
  const stages = details.stages.map(presentStage);
  const current =
    invocation.state === 'completed' || invocation.state === 'cancelled' || invocation.state === 'failed'
      ? null
      : (stages.find((s) => s.state !== 'completed' && s.state !== 'skipped') ?? null);
  const handedOff = details.stages
    .filter((s) => s.handoffId && s.assignedAt)
    .sort((a, b) => b.assignedAt!.getTime() - a.assignedAt!.getTime())[0];
  return {
    ...presentCommon(invocation),
    intent_normalized: normalizedIntentOf(invocation),
    retried_as: details.retriedAs,
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
    blockers: ((invocation.blockers as unknown as Blocker[]) ?? []).map(withEffect),
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
