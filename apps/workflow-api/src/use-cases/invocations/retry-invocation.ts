import type { Actor } from '@svc/auth';
import { conflict } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound, projectArchived } from '../../domain/errors';
import { parseCorrelationId, parseIdempotencyKey } from '../../domain/invocation-request';
import { createInvocation } from './create-invocation';
import type { InvocationRequestBody } from './create-invocation';

/** The states a retry starts from: the invocation ended without a result. */
const RETRYABLE = new Set(['failed', 'cancelled']);

export interface RetryInvocationInput {
  /** The `Idempotency-Key` header as sent (checked once the invocation is known to be this project's). */
  idempotencyKey: string | undefined;
  /** The `X-Correlation-ID` header as sent; the original's is kept when absent. */
  correlationId: string | undefined;
  requestId?: string;
}

/**
 * Retry: a failed or cancelled invocation's stored request is invoked again as a new invocation naming it in
 * `retry_of` (its route decided again, as invoke does). Any other state is 409 `invocation_not_retryable`.
 * The key replays like invoke's; a first retry also records `invocation.retried` on the original.
 */
export async function retryInvocation(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  invocationId: string,
  input: RetryInvocationInput,
): Promise<InvocationView & { replayed: boolean }> {
  const original = await deps.db.invocation.findFirst({ where: { id: invocationId, projectId: project.id } });
  if (!original) throw invocationNotFound(invocationId);
  const idempotencyKey = parseIdempotencyKey(input.idempotencyKey);
  const correlationId = parseCorrelationId(input.correlationId);
  if (!RETRYABLE.has(original.state)) {
    throw conflict(
      'invocation_not_retryable',
      `The invocation is '${original.state}'; only a failed or cancelled invocation can be retried.`,
      { state: original.state },
    );
  }
  if (project.archivedAt) throw projectArchived(project.id);
  // The stored request is the normalized one; the intent goes out again exactly as it was first sent.
  const body = { ...(original.request as InvocationRequestBody), intent: original.intent };
  const { invocation, replayed } = await createInvocation(deps, actor, project, {
    idempotencyKey,
    correlationId: correlationId ?? original.correlationId,
    body,
    retryOf: original.id,
    ...(input.requestId ? { requestId: input.requestId } : {}),
  });
  if (!replayed) {
    await deps.audit.record({
      workspaceId: project.workspace.id,
      projectId: project.id,
      actor,
      action: 'invocation.retried',
      targetType: 'invocation',
      targetId: original.id,
      data: { retried_as: invocation.id, state: original.state },
      requestId: input.requestId,
    });
  }
  return { invocation, details: await loadRunDetails(deps.db, invocation.id), replayed };
}
