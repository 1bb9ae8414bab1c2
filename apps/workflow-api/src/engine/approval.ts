import type { ParticipantActor } from '@svc/auth';
import { conflict } from '@svc/service-kit';
import type { ProjectRef } from '../auth/project-directory';
import type { WorkflowDeps } from '../deps';
import type { Invocation } from '../generated/prisma/client';
import { dispatchDeliveries, recordDeliveryEvent } from '../delivery/events';
import type { DeliveryJob } from '../delivery/queue';
import { invocationNotFound } from './launch';
import { dispatchOutbox, writeOutbox } from './outbox';
import type { ReconcileJob } from './queue';
import { lockInvocation } from './states';

export interface ApprovalInput {
  decision: 'approve' | 'reject';
  comment?: string;
}

/**
 * The human decision on a run held by `human_approval_required`. Approve: the invocation goes back to
 * `launching` and the run starts; reject: it ends `cancelled`. One decision per invocation, audited with the
 * participant and the comment. (The caller has checked the participant's workspace role.)
 */
export async function decideApproval(
  deps: WorkflowDeps,
  actor: ParticipantActor,
  project: ProjectRef,
  invocationId: string,
  input: ApprovalInput,
  requestId?: string,
): Promise<Invocation> {
  const jobs: ReconcileJob[] = [];
  const deliveryJobs: DeliveryJob[] = [];
  const invocation = await deps.db.$transaction(async (tx) => {
    const current = await lockInvocation(tx, invocationId);
    if (!current || current.projectId !== project.id) throw invocationNotFound(invocationId);
    const pending =
      current.approvalRequired &&
      current.approvalDecision === null &&
      (current.state === 'awaiting_approval' || current.state === 'launching');
    if (!pending) {
      throw conflict(
        'approval_not_pending',
        current.approvalDecision
          ? `The invocation was already ${current.approvalDecision === 'approve' ? 'approved' : 'rejected'}.`
          : `The invocation is '${current.state}'; nothing awaits approval.`,
        { state: current.state },
      );
    }
    const now = deps.now();
    const approved = input.decision === 'approve';
    const updated = await tx.invocation.update({
      where: { id: invocationId },
      data: {
        approvalDecision: input.decision,
        approvalBy: actor.participantId,
        approvalAt: now,
        approvalComment: input.comment ?? null,
        state: approved ? 'launching' : 'cancelled',
        attention: 'none',
        attentionReason: approved ? null : `Rejected by participant ${actor.participantId}.`,
        ...(approved ? {} : { completedAt: now }),
      },
    });
    if (approved) jobs.push(await writeOutbox(tx, invocationId, 'approval'));
    else deliveryJobs.push(...(await recordDeliveryEvent(tx, updated, 'invocation.cancelled', null, now)));
    await deps.audit.record(
      {
        workspaceId: current.workspaceId,
        projectId: current.projectId,
        actor,
        action: approved ? 'invocation.approved' : 'invocation.rejected',
        targetType: 'invocation',
        targetId: invocationId,
        data: { comment: input.comment ?? null },
        requestId,
      },
      tx,
    );
    return updated;
  });
  await dispatchOutbox(deps.db, deps.queue, jobs);
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  return invocation;
}
