import type { Actor, AgentActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import { HANDOFF_TRANSITIONS, invalidTransition, transitionStamp } from '../domain/handoff-states';
import type { HandoffAction } from '../domain/handoff-states';
import type { Handoff, Prisma } from '../generated/prisma/client';

export const handoffNotFound = (handoffId: string) =>
  new AppError({ status: 404, code: 'handoff_not_found', detail: `No handoff '${handoffId}'.` });

const notAssigned = (handoffId: string) =>
  new AppError({
    status: 403,
    code: 'handoff_not_assigned',
    detail: `Handoff '${handoffId}' is not assigned to you.`,
  });

/**
 * Loads a handoff an agent acts on: another workspace's (or a missing one) is not found, one assigned to
 * another agent — or not assigned at all, unless `allowUnassigned` — is 403 `handoff_not_assigned`.
 */
export async function loadHandoffForAgent(
  db: Pick<HubDeps['db'], 'handoff'>,
  actor: AgentActor,
  handoffId: string,
  options: { allowUnassigned?: boolean } = {},
): Promise<Handoff> {
  const handoff = await db.handoff.findUnique({ where: { id: handoffId } });
  if (!handoff || handoff.workspaceId !== actor.workspaceId) throw handoffNotFound(handoffId);
  if (handoff.assigneeAgentId === actor.agentId) return handoff;
  if (handoff.assigneeAgentId === null && options.allowUnassigned) return handoff;
  throw notAssigned(handoffId);
}

const MAX_ATTEMPTS = 3;

export interface TransitionOptions {
  requestId?: string;
  /** More columns to write with the transition (e.g. the blocker reason). */
  data?: Prisma.HandoffUncheckedUpdateManyInput;
  /** More audit context (redacted by the audit repository). */
  auditData?: Record<string, unknown>;
  /** Runs inside the transaction after the transition was written (e.g. to store a summary). */
  after?: (tx: Prisma.TransactionClient, handoff: Handoff) => Promise<void>;
}

/**
 * Applies one transition: checks it against the state machine, writes it with a compare-and-set on the
 * status and assignee the decision was based on, and records the audit event in the same transaction.
 * When a concurrent change wins the race, the decision is taken again on the fresh row (which then
 * usually answers 403 or 409).
 */
export async function transitionHandoff(
  deps: HubDeps,
  actor: Actor,
  load: () => Promise<Handoff>,
  action: HandoffAction,
  options: TransitionOptions = {},
): Promise<Handoff> {
  const rule = HANDOFF_TRANSITIONS[action];
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
    const current = await load();
    if (!rule.from.includes(current.status)) throw invalidTransition(current, action);
    const now = deps.now();
    const assigns = action === 'claim' && current.assigneeAgentId === null && actor.kind === 'agent';
    const data: Prisma.HandoffUncheckedUpdateManyInput = {
      status: rule.to,
      updatedAt: now,
      ...transitionStamp(action, current, now),
      ...(assigns ? { assigneeAgentId: actor.agentId } : {}),
      ...options.data,
    };
    const updated = await deps.db.$transaction(async (tx) => {
      const { count } = await tx.handoff.updateMany({
        where: { id: current.id, status: current.status, assigneeAgentId: current.assigneeAgentId },
        data,
      });
      if (count === 0) return null;
      const handoff = await tx.handoff.findUniqueOrThrow({ where: { id: current.id } });
      await options.after?.(tx, handoff);
      await deps.audit.record(
        {
          workspaceId: handoff.workspaceId,
          actor,
          action: rule.audit,
          targetType: 'handoff',
          targetId: handoff.id,
          data: {
            from: current.status,
            to: handoff.status,
            ...(assigns ? { assigned_to: handoff.assigneeAgentId } : {}),
            ...options.auditData,
          },
          requestId: options.requestId,
        },
        tx,
      );
      return handoff;
    });
    if (updated) return updated;
  }
  throw new AppError({
    status: 409,
    code: 'handoff_conflict',
    detail: 'The handoff changed while this request was being applied; read it again and retry.',
  });
}
