import type { WorkflowApi } from '@svc/contracts';
import type { StageAssignmentRecord } from '../data/stage-assignments.lookups';
import { heartbeatIntervalSeconds } from '../domain/engine-settings';
import type { EngineSettings } from '../domain/engine-settings';
import type { StageEvidence } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];
export type AgentStageAssignment = Schemas['AgentStageAssignment'];

/** A stage as its owner sees it: intent, place in the run, pinned artifact schema, heartbeat timing. */
export function presentAssignment(
  record: StageAssignmentRecord,
  engine: EngineSettings,
): AgentStageAssignment {
  const { stage, invocation, stageCount } = record;
  return {
    stage_id: stage.id,
    invocation_id: stage.invocationId,
    project_id: invocation.projectId,
    run_id: stage.runId,
    key: stage.key,
    title: stage.title,
    position: stage.position,
    stage_count: stageCount,
    is_final: stage.position === stageCount,
    state: stage.state as AgentStageAssignment['state'],
    handoff_id: stage.handoffId,
    intent: invocation.intent,
    required_capabilities: (stage.requiredCapabilities as string[]) ?? [],
    artifact_schema: {
      name: record.artifactSchema.name,
      version: record.artifactSchema.version,
      json_schema: record.artifactSchema.jsonSchema,
    },
    heartbeat_interval_seconds: heartbeatIntervalSeconds(engine),
    stall_after_seconds: Math.round(engine.stallAfterMs / 1000),
    assigned_at: stage.assignedAt ? stage.assignedAt.toISOString() : null,
  };
}

export function presentEvidence(evidence: StageEvidence): Schemas['StageEvidence'] {
  return {
    evidence_id: evidence.id,
    stage_id: evidence.stageId,
    kind: evidence.kind,
    content: evidence.content,
    created_at: evidence.createdAt.toISOString(),
  };
}
