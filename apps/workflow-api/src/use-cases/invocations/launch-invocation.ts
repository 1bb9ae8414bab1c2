import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { readInvocationWithLimits } from '../../data/invocation-stages.lookups';
import { loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { launchAtOnce, writeLaunch } from '../../data/invocation-launch.writer';
import type { LaunchWrite } from '../../data/invocation-launch.writer';
import { lockInvocation } from '../../data/invocations.locks';
import { dispatchOutbox, dispatchStampedOutbox, writeOutbox } from '../../data/outbox.writer';
import type { ReconcileJob } from '../../data/reconcile.queue';
import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView, RunDetails } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import type { Blocker } from '../../domain/blockers';
import type { RunLimits } from '../../domain/run-limits';
import { invocationNotFound } from '../../domain/errors';
import type { InvocationRoute } from '../../domain/invocation-request';
import { isTerminal } from '../../domain/invocation-states';
import type { Invocation } from '../../generated/prisma/client';
import { assessLaunchReadiness } from '../resolve/assess-launch-readiness';
import type { LaunchReadiness } from '../resolve/assess-launch-readiness';
import { sqlOn } from '../../db';

export type LaunchReport = WorkflowApi.components['schemas']['RunsLaunchResponse']['launch'];

export interface LaunchResult extends InvocationView {
  /** true: the launch was accepted or a reconcile queued (202); false: terminal, nothing changed (200). */
  accepted: boolean;
  launch: LaunchReport;
}

const launchable = (state: string) => state === 'received' || state === 'blocked';

/** The run details of an invocation that has not launched yet. */
const NO_DETAILS: RunDetails = { run: null, stages: [], artifact: null, retriedAs: [] };

/** The shared readiness check for an invocation's stored route (outside any transaction: it asks the hub). */
async function readinessOf(
  deps: WorkflowDeps,
  invocation: Invocation,
  limits: RunLimits,
): Promise<LaunchReadiness> {
  const route = (invocation.route ?? {}) as Partial<InvocationRoute>;
  const template = route.matched ? await loadInvocationTemplate(sqlOn(deps.pool), invocation) : null;
  return assessLaunchReadiness(
    deps,
    invocation.projectId,
    { matched: route.matched === true, contractId: invocation.contractId, template },
    invocation.workspaceId,
    { limits, recentHubAnswers: true },
  );
}

/** What an accepted launch writes besides its times: blockers, approval, the audit event; and the run deadline. */
async function acceptedLaunch(
  deps: WorkflowDeps,
  actor: Actor,
  invocation: Invocation,
  readiness: LaunchReadiness,
  requestId: string | undefined,
): Promise<Omit<LaunchWrite, 'launchedAt' | 'deadlineAt'> & { deadlineSeconds: number | undefined }> {
  const template = await loadInvocationTemplate(sqlOn(deps.pool), invocation);
  const approvalRequired = template?.definition.guardrails.human_approval_required === true;
  const { blockers } = readiness;
  return {
    invocationId: invocation.id,
    projectId: invocation.projectId,
    // Waiting for an owner: the blockers stay visible until the engine assigns the stage.
    blockers,
    approvalRequired,
    deadlineSeconds: template?.definition.guardrails.run_deadline_seconds,
    event: {
      workspaceId: invocation.workspaceId,
      projectId: invocation.projectId,
      actor,
      action: 'invocation.launch_requested',
      targetType: 'invocation',
      targetId: invocation.id,
      data: {
        approval_required: approvalRequired,
        outcome: readiness.outcome,
        codes: blockers.map((b) => b.code),
      },
      requestId,
    },
  };
}

/**
 * Launch: runs the readiness check preflight reports ({@link assessLaunchReadiness}) and acts on its outcome.
 * `refused` (a `refuses_launch` blocker): 409 `launch_blocked`, the invocation `blocked`. `accepted` or
 * `accepted_waiting_for_owner`: a `received` (or `blocked`) invocation becomes `launching` with an outbox row in
 * the same transaction; the job enqueued after the commit starts the run, which waits for an owner when none
 * can take the stage yet (the blockers are shown on the invocation meanwhile). A launched invocation gets a
 * reconcile (at most one pending at a time); a terminal one is left alone.
 */
export async function launchInvocation(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  invocationId: string,
  requestId?: string,
): Promise<LaunchResult> {
  // The invocation and its run limits in one statement; the hub is asked before any transaction, so no row lock
  // or pooled connection waits on it.
  const read = await readInvocationWithLimits(deps.pool, invocationId, project.id);
  if (!read) throw invocationNotFound(invocationId);
  const peek = read.invocation;
  const readiness = launchable(peek.state) ? await readinessOf(deps, peek, read.limits) : null;
  if (readiness && readiness.outcome !== 'refused') {
    // The usual launch: one statement, when the invocation is still launchable (else the locked way below).
    const accepted = await acceptedLaunch(deps, actor, peek, readiness, requestId);
    const written = await launchAtOnce(deps.pool, deps.audit, { ...accepted, now: deps.now() });
    if (written) {
      await deps.queue.announceInvocationChanges([invocationId]);
      await dispatchStampedOutbox(deps.db, deps.queue, [written.job]);
      return {
        invocation: written.invocation,
        // Received or blocked until now, so it has no run, stages, artifact or retries yet (a run starts only
        // from `launching`, an artifact only for a run, and only an ended invocation is retried).
        details: NO_DETAILS,
        accepted: true,
        launch: { outcome: readiness.outcome, blockers: readiness.blockers },
      };
    }
  }

  const jobs: ReconcileJob[] = [];
  const outcome = await deps.db.$transaction(
    async (tx) => {
      const invocation = await lockInvocation(tx, invocationId);
      if (!invocation || invocation.projectId !== project.id) throw invocationNotFound(invocationId);
      if (isTerminal(invocation.state)) {
        return { invocation, accepted: false, refused: null, launch: { outcome: 'terminal', blockers: [] } };
      }
      if (!launchable(invocation.state) || !readiness) {
        const pending = await tx.outboxEntry.count({ where: { invocationId, processedAt: null } });
        if (pending === 0) jobs.push(await writeOutbox(tx, invocationId, 'launch', project.id));
        return {
          invocation,
          accepted: true,
          refused: null,
          launch: { outcome: 'reconciling', blockers: [] },
        };
      }
      const { blockers } = readiness;
      if (readiness.outcome === 'refused') {
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
        return { invocation: updated, accepted: false, refused: blockers, launch: null };
      }
      const { deadlineSeconds, ...accepted } = await acceptedLaunch(
        deps,
        actor,
        invocation,
        readiness,
        requestId,
      );
      const launchedAt = invocation.launchedAt ?? deps.now();
      // The update, its outbox row and its audit event in one statement.
      const { invocation: updated, job } = await writeLaunch(tx, deps.audit, {
        ...accepted,
        launchedAt,
        deadlineAt:
          deadlineSeconds === undefined ? null : new Date(launchedAt.getTime() + deadlineSeconds * 1000),
      });
      jobs.push(job);
      const launch: LaunchReport = { outcome: readiness.outcome, blockers: readiness.blockers };
      return { invocation: updated, accepted: true, refused: null, launch, details: NO_DETAILS };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await deps.queue.announceInvocationChanges([invocationId]);
  if (outcome.refused) throw launchBlocked(invocationId, outcome.refused);
  await dispatchOutbox(deps.db, deps.queue, jobs);
  return {
    invocation: outcome.invocation,
    details:
      'details' in outcome && outcome.details
        ? outcome.details
        : await loadRunDetails(deps.db, outcome.invocation.id),
    accepted: outcome.accepted,
    launch: outcome.launch as LaunchReport,
  };
}

function launchBlocked(invocationId: string, blockers: Blocker[]): AppError {
  return new AppError({
    status: 409,
    code: 'launch_blocked',
    detail: `The invocation cannot launch: ${blockers.map((b) => b.code).join(', ')}.`,
    extra: { blockers, invocation_id: invocationId, launch_outcome: 'refused' },
  });
}
