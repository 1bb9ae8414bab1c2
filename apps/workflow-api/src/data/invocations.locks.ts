import { Prisma } from '../generated/prisma/client';
import type { Tx } from '../db';
import type { Invocation } from '../generated/prisma/client';

/**
 * Every stored field of an invocation and its column. Typed as a record of the model's fields, so a field added
 * to the model without its column here does not compile.
 */
const INVOCATION_COLUMNS: Record<keyof Invocation, string> = {
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

/** The select list of a whole invocation row of `alias`, each column named as its model field. */
const selectInvocation = (alias: string) =>
  Prisma.raw(
    Object.entries(INVOCATION_COLUMNS)
      .map(([field, column]) => `${alias}.${column} AS "${field}"`)
      .join(', '),
  );

const LOCKED_INVOCATION = selectInvocation('i');

/**
 * Locks the invocation row for the rest of the transaction and reads it, in one statement. Every writer of an
 * invocation's run (reconcile, launch, approval, stage actions, publication) takes this lock first, so they
 * never interleave.
 */
export async function lockInvocation(tx: Tx, invocationId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<Invocation[]>`
    SELECT ${LOCKED_INVOCATION} FROM invocations i WHERE i.id = ${invocationId} FOR UPDATE`;
  return rows[0] ?? null;
}

/**
 * {@link lockInvocation} for the invocation of a stage, found in the same statement that locks it; null when no
 * such stage exists.
 */
export async function lockInvocationOfStage(tx: Tx, stageId: string): Promise<Invocation | null> {
  const rows = await tx.$queryRaw<Invocation[]>`
    SELECT ${LOCKED_INVOCATION} FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.id = ${stageId} FOR UPDATE OF i`;
  return rows[0] ?? null;
}
