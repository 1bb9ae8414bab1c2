import type { WorkflowDeps } from '../../deps';

const HUB_TIMEOUT_MS = 5_000;
const BATCH = 100;
/** Retries back off from 1 s, doubling, up to this. */
const MAX_BACKOFF_MS = 5 * 60_000;

export interface CloseResult {
  /** Handoffs the hub confirmed (cancelled, or already completed or gone). */
  closed: number;
  /** Handoffs still open because the hub could not be reached or refused; retried later. */
  retrying: number;
}

type Answer = { outcome: 'cancelled' | 'completed' | 'not_found' } | { retry: string };

async function cancelAtHub(deps: WorkflowDeps, handoffId: string, reason: string): Promise<Answer> {
  let res;
  try {
    res = await deps.hub.POST('/internal/v1/handoffs/{handoffId}/cancel', {
      params: { path: { handoffId } },
      body: { reason },
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
  } catch (error) {
    return { retry: error instanceof Error ? error.name : 'hub_unreachable' };
  }
  if (res.data) return { outcome: 'cancelled' };
  const status = res.response.status;
  // Completed by its owner before the engine closed it: nothing to undo, the hub keeps it as it is.
  if (status === 409 && res.error?.code === 'handoff_invalid_transition') return { outcome: 'completed' };
  if (status === 404) return { outcome: 'not_found' };
  return { retry: `hub answered ${status}${res.error?.code ? ` ${res.error.code}` : ''}` };
}

/**
 * Cancels at the hub the stage handoffs recorded by {@link recordHandoffClosures} that are not closed yet: those
 * of one invocation (right after the commit that recorded them), or, for the sweeper, those whose next attempt
 * is due. A row is closed once the hub confirms; otherwise it is retried with a doubling backoff, without end
 * (a hub outage only delays the cancel). The first answer that is not a confirmation ends the batch, so an outage
 * costs one timeout per call. Safe to run concurrently: the hub's cancel is idempotent.
 */
export async function closeStageHandoffs(
  deps: WorkflowDeps,
  scope: { invocationId?: string } = {},
): Promise<CloseResult> {
  const now = deps.now();
  const pending = await deps.db.handoffClosure.findMany({
    where: {
      closedAt: null,
      ...(scope.invocationId ? { invocationId: scope.invocationId } : { nextAttemptAt: { lte: now } }),
    },
    orderBy: { nextAttemptAt: 'asc' },
    take: BATCH,
  });
  const result: CloseResult = { closed: 0, retrying: 0 };
  for (const row of pending) {
    const answer = await cancelAtHub(deps, row.handoffId, row.reason);
    if ('outcome' in answer) {
      await deps.db.handoffClosure.updateMany({
        where: { handoffId: row.handoffId, closedAt: null },
        data: { closedAt: deps.now(), outcome: answer.outcome, attempts: { increment: 1 } },
      });
      result.closed += 1;
      continue;
    }
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(row.attempts, 20));
    await deps.db.handoffClosure.updateMany({
      where: { handoffId: row.handoffId, closedAt: null },
      data: { attempts: { increment: 1 }, nextAttemptAt: new Date(deps.now().getTime() + backoff) },
    });
    result.retrying += 1;
    deps.logger.warn(
      {
        handoff_id: row.handoffId,
        invocation_id: row.invocationId,
        attempts: row.attempts + 1,
        why: answer.retry,
      },
      'stage handoff not cancelled at the hub yet; retrying later',
    );
    break;
  }
  return result;
}

/** {@link closeStageHandoffs} for one invocation after its commit; a failure is left to the sweeper. */
export async function closeInvocationHandoffs(deps: WorkflowDeps, invocationId: string): Promise<void> {
  await closeStageHandoffs(deps, { invocationId }).catch((error: unknown) =>
    deps.logger.warn(
      { err: error, invocation_id: invocationId },
      'closing stage handoffs failed; the sweeper retries',
    ),
  );
}
