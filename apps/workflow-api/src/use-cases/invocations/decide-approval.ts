import type { ParticipantActor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, conflict } from '@svc/service-kit';
import type { MemberDirectory } from '../../auth/member-directory';
import type { ProjectRef } from '../../auth/project-directory';
import { dispatchDeliveries, recordDeliveryEvent } from '../../data/delivery.events';
import type { DeliveryJob } from '../../data/delivery.queue';
import { lockInvocation } from '../../data/invocations.locks';
import { dispatchOutbox, writeOutbox } from '../../data/outbox.writer';
import type { ReconcileJob } from '../../data/reconcile.queue';
import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound } from '../../domain/errors';
import { sqlOfPrisma } from '../../db';

export type ApprovalInput = WorkflowApi.components['schemas']['RunsApprovalRequest'];

/** Workspace roles that may approve or reject a run. */
const APPROVER_ROLES = ['owner', 'admin'];

/**
 * The human decision on a run held by `human_approval_required`. Only a workspace owner or admin may decide
 * (403 `approval_role_required`). Approve: the invocation goes back to `launching` and the run starts; reject:
 * it ends `cancelled`. One decision per invocation, audited with the participant and the comment.
 */
export async function decideApproval(
  deps: WorkflowDeps,
  members: MemberDirectory,
  actor: ParticipantActor,
  project: ProjectRef,
  invocationId: string,
  input: ApprovalInput,
  requestId?: string,
): Promise<InvocationView> {
  const member = await members.find(project.workspace.id, actor.participantId);
  if (!member || !APPROVER_ROLES.includes(member.role)) {
    throw new AppError({
      status: 403,
      code: 'approval_role_required',
      detail: 'Only a workspace owner or admin may approve or reject a run.',
    });
  }
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
        ...(approved
          ? {}
          : {
              completedAt: now,
              cancellation: {
                cancelled_by: { kind: 'participant', id: actor.participantId },
                reason: input.comment ?? 'Rejected at approval.',
                cancelled_at: now.toISOString(),
              },
            }),
      },
    });
    if (approved) jobs.push(await writeOutbox(tx, invocationId, 'approval', current.projectId));
    else
      deliveryJobs.push(
        ...(await recordDeliveryEvent(sqlOfPrisma(tx), updated, 'invocation.cancelled', null, now)),
      );
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
  await deps.queue.announceInvocationChanges([invocation.id]);
  await dispatchOutbox(deps.db, deps.queue, jobs);
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  return { invocation, details: await loadRunDetails(deps.db, invocation.id) };
}
