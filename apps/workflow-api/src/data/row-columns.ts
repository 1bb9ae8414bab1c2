import { Prisma } from '../generated/prisma/client';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';

/**
 * The stored fields of the engine's hot rows and their columns, for the few statements that read a whole row
 * with raw SQL (a row lock, a row and its children in one round trip). Each is typed as a record of the
 * model's fields, so a field added to the model without its column here does not compile.
 */
/** Every stored field of an invocation and its column. */
export const INVOCATION_COLUMNS: Record<keyof Invocation, string> = {
  id: 'id',
  workspaceId: 'workspace_id',
  projectId: 'project_id',
  idempotencyKey: 'idempotency_key',
  fingerprint: 'fingerprint',
  correlationId: 'correlation_id',
  request: 'request',
  intent: 'intent',
  contractId: 'contract_id',
  templateKey: 'template_key',
  templateVersion: 'template_version',
  route: 'route',
  state: 'state',
  attention: 'attention',
  createdByKind: 'created_by_kind',
  createdById: 'created_by_id',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  keyExpiresAt: 'key_expires_at',
  attentionReason: 'attention_reason',
  blockers: 'blockers',
  approvalRequired: 'approval_required',
  approvalDecision: 'approval_decision',
  approvalBy: 'approval_by',
  approvalAt: 'approval_at',
  approvalComment: 'approval_comment',
  launchedAt: 'launched_at',
  completedAt: 'completed_at',
  failure: 'failure',
  cancellation: 'cancellation',
  deadlineAt: 'deadline_at',
  queuedAt: 'queued_at',
  retryOf: 'retry_of',
};

/** Every stored field of a run stage and its column. */
export const RUN_STAGE_COLUMNS: Record<keyof RunStage, string> = {
  id: 'id',
  runId: 'run_id',
  invocationId: 'invocation_id',
  workspaceId: 'workspace_id',
  position: 'position',
  key: 'key',
  title: 'title',
  requiredCapabilities: 'required_capabilities',
  state: 'state',
  ownerAgentId: 'owner_agent_id',
  handoffId: 'handoff_id',
  stalledAgentIds: 'stalled_agent_ids',
  stalledAt: 'stalled_at',
  attempts: 'attempts',
  failures: 'failures',
  failureReason: 'failure_reason',
  blockerReason: 'blocker_reason',
  progress: 'progress',
  summary: 'summary',
  firstAssignedAt: 'first_assigned_at',
  assignedAt: 'assigned_at',
  claimedAt: 'claimed_at',
  lastHeartbeatAt: 'last_heartbeat_at',
  completedAt: 'completed_at',
  ownerSpawn: 'owner_spawn',
};

/** Every stored field of a run and its column. */
export const WORKFLOW_RUN_COLUMNS: Record<keyof WorkflowRun, string> = {
  id: 'id',
  invocationId: 'invocation_id',
  workspaceId: 'workspace_id',
  projectId: 'project_id',
  state: 'state',
  startedAt: 'started_at',
  endedAt: 'ended_at',
};

/** The fields `columns` names, read from `row` where each is named with `prefix` before it. */
export function fieldsOf<T>(row: Record<string, unknown>, columns: Record<string, string>, prefix = ''): T {
  return Object.fromEntries(Object.keys(columns).map((field) => [field, row[`${prefix}${field}`]])) as T;
}

/**
 * The select list of `columns` read from `alias`, each column named as its field with `prefix` before it (so two
 * tables' fields can share one row), as text (a `RETURNING` list of a statement written as text).
 */
export function columnList(columns: Record<string, string>, alias: string, prefix = ''): string {
  return Object.entries(columns)
    .map(([field, column]) => `${alias}.${column} AS "${prefix}${field}"`)
    .join(', ');
}

/** {@link columnList} as a fragment of a tagged `$queryRaw` statement. */
export function selectColumns(columns: Record<string, string>, alias: string, prefix = ''): Prisma.Sql {
  return Prisma.raw(columnList(columns, alias, prefix));
}

/** Every stored field of an artifact and its column. */
export const ARTIFACT_COLUMNS: Record<keyof Artifact, string> = {
  id: 'id',
  invocationId: 'invocation_id',
  runId: 'run_id',
  workspaceId: 'workspace_id',
  projectId: 'project_id',
  schemaId: 'schema_id',
  schemaName: 'schema_name',
  schemaVersion: 'schema_version',
  version: 'version',
  summary: 'summary',
  payload: 'payload',
  payloadHash: 'payload_hash',
  provenance: 'provenance',
  limitations: 'limitations',
  createdByKind: 'created_by_kind',
  createdById: 'created_by_id',
  createdAt: 'created_at',
};
