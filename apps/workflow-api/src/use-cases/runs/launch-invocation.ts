import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { lockInvocation } from '../../data/invocations.locks';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { dispatchOutbox, writeOutbox } from '../../data/outbox.writer';
import { templateReadiness } from '../../data/route.readiness';
import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import type { Blocker } from '../../domain/blockers';
import { invocationNotFound } from '../../domain/errors';
import type { InvocationRoute } from '../../domain/invocation-request';
import { isTerminal } from '../../domain/invocation-states';
import type { ReconcileJob } from '../../domain/reconcile-queue';

export interface LaunchResult extends InvocationView {
  /** true: the launch was accepted or a reconcile queued (202); false: terminal, nothing changed (200). */
  accepted: boolean;
}

const NO_MATCH: Blocker = {
  category: 'classifier_template_configuration',
  code: 'no_contract_matched',
  message:
    'No project contract matched this invocation, so it has no governed route; a project invocation launches only with an explicit contract and template match.',
  recommended_action:
    'Create or fix a contract whose classifier matches the intent (or pin one with workflow_contract_id), then invoke again with a new Idempotency-Key.',
};

/**
 * Launch: a `received` (or `blocked`) invocation whose route is ready becomes `launching` with an outbox row in
 * the same transaction; the job enqueued after the commit starts the run. A launched invocation gets a reconcile
 * (at most one pending at a time); a terminal one is left alone. A route that is not ready is refused with
 * typed blockers (409 `launch_blocked`) and the invocation shows them (`blocked`).
 */
export async function launchInvocation(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  invocationId: string,
  requestId?: string,
): Promise<LaunchResult> {
  const jobs: ReconcileJob[] = [];
  const outcome = await deps.db.$transaction(
    async (tx) => {
      const invocation = await lockInvocation(tx, invocationId);
      if (!invocation || invocation.projectId !== project.id) throw invocationNotFound(invocationId);
      if (isTerminal(invocation.state)) return { invocation, accepted: false, blockers: null };
      if (invocation.state !== 'received' && invocation.state !== 'blocked') {
        const pending = await tx.outboxEntry.count({ where: { invocationId, processedAt: null } });
        if (pending === 0) jobs.push(await writeOutbox(tx, invocationId, 'launch'));
        return { invocation, accepted: true, blockers: null };
      }
      const route = (invocation.route ?? {}) as Partial<InvocationRoute>;
      let blockers: Blocker[];
      let approvalRequired = false;
      if (!route.matched) {
        blockers = [NO_MATCH];
      } else {
        const template = await loadInvocationTemplate(tx, invocation);
        // Inside the transaction's own connection: a second pool connection per launch could exhaust the pool.
        const readiness = await templateReadiness(tx, project.id, template, invocation.contractId ?? '');
        blockers = readiness.blockers;
        approvalRequired = template?.definition.guardrails.human_approval_required === true;
      }
      const now = deps.now();
      if (blockers.length > 0) {
        const updated = await tx.invocation.update({
          where: { id: invocationId },
          data: {
            state: 'blocked',
            attention: 'blocked',
            attentionReason: blockers.map((b) => b.message).join(' '),
            blockers: blockers as never,
          },
        });
        await deps.audit.record(
          {
            workspaceId: invocation.workspaceId,
            projectId: invocation.projectId,
            actor,
            action: 'invocation.launch_blocked',
            targetType: 'invocation',
            targetId: invocationId,
            data: { codes: blockers.map((b) => b.code) },
            requestId,
          },
          tx,
        );
        return { invocation: updated, accepted: false, blockers };
      }
      const updated = await tx.invocation.update({
        where: { id: invocationId },
        data: {
          state: 'launching',
          attention: 'none',
          attentionReason: null,
          blockers: [],
          approvalRequired,
          launchedAt: invocation.launchedAt ?? now,
        },
      });
      jobs.push(await writeOutbox(tx, invocationId, 'launch'));
      await deps.audit.record(
        {
          workspaceId: invocation.workspaceId,
          projectId: invocation.projectId,
          actor,
          action: 'invocation.launch_requested',
          targetType: 'invocation',
          targetId: invocationId,
          data: { approval_required: approvalRequired },
          requestId,
        },
        tx,
      );
      return { invocation: updated, accepted: true, blockers: null };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  if (outcome.blockers) {
    throw new AppError({
      status: 409,
      code: 'launch_blocked',
      detail: `The invocation cannot launch: ${outcome.blockers.map((b) => b.code).join(', ')}.`,
      extra: { blockers: outcome.blockers, invocation_id: invocationId },
    });
  }
  await dispatchOutbox(deps.db, deps.queue, jobs);
  return {
    invocation: outcome.invocation,
    details: await loadRunDetails(deps.db, outcome.invocation.id),
    accepted: outcome.accepted,
  };
}
