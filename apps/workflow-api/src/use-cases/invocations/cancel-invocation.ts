import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { conflict, redactValue } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { dispatchDeliveries } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { endInvocation } from '../../data/invocation.ending';
import { lockInvocation } from '../../data/invocations.locks';
import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound } from '../../domain/errors';
import { closeInvocationHandoffs } from '../engine/close-stage-handoffs';
import { sqlOfPrisma } from '../../db';

/**
 * Cancel: any non-terminal invocation ends `cancelled` (stages closed, owners released, run ended,
 * `invocation.cancelled` recorded for delivery, audited). Cancelling a cancelled one again changes nothing; a
 * completed or failed one is 409 `invocation_terminal`. After the commit the open stages' hub handoffs are
 * cancelled at the hub (the sweeper retries what the hub did not confirm).
 */
export async function cancelInvocation(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  invocationId: string,
  reason: string | undefined,
  requestId?: string,
): Promise<InvocationView> {
  const deliveryJobs: DeliveryJob[] = [];
  const invocation = await deps.db.$transaction(
    async (tx) => {
      const current = await lockInvocation(tx, invocationId);
      if (!current || current.projectId !== project.id) throw invocationNotFound(invocationId);
      if (current.state === 'cancelled') return current;
      if (current.state === 'completed' || current.state === 'failed') {
        throw conflict(
          'invocation_terminal',
          `The invocation is '${current.state}'; it cannot be cancelled.`,
          {
            state: current.state,
          },
        );
      }
      const now = deps.now();
      const who = actorIdentity(actor);
      const ended = await endInvocation(
        deps,
        sqlOfPrisma(tx),
        current,
        {
          state: 'cancelled',
          cancellation: {
            cancelled_by: { kind: who.kind as 'api_key' | 'participant', id: who.id },
            reason: reason === undefined ? null : String(redactValue(reason)),
            cancelled_at: now.toISOString(),
          },
        },
        actor,
        now,
        requestId,
      );
      deliveryJobs.push(...ended.deliveryJobs);
      return ended.invocation;
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await deps.queue.announceInvocationChanges([invocation.id]);
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  await closeInvocationHandoffs(deps, invocation.id);
  return { invocation, details: await loadRunDetails(deps.db, invocation.id) };
}
