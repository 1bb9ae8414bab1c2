import type { AgentActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { Handoff, HandoffStatus, Prisma } from '../generated/prisma/client';

/**
 * The handoff state machine. Agents move their own handoffs forward; participants and keys cancel.
 *
 *   open ──accept──▶ accepted ──claim──▶ claimed ──complete──▶ completed
 *     └────────────claim────────────────▶   ▲ │
 *                 accepted|claimed ──block──▶ blocked ──unblock──▶ claimed
 *   any state but completed|cancelled ──cancel──▶ cancelled
 */
export type HandoffAction = 'accept' | 'claim' | 'block' | 'unblock' | 'complete' | 'cancel';

interface TransitionRule {
  from: readonly HandoffStatus[];
  to: HandoffStatus;
  audit: string;
}

export const HANDOFF_TRANSITIONS: Readonly<Record<HandoffAction, TransitionRule>> = {
  accept: { from: ['open'], to: 'accepted', audit: 'handoff.accepted' },
  claim: { from: ['open', 'accepted'], to: 'claimed', audit: 'handoff.claimed' },
  block: { from: ['accepted', 'claimed'], to: 'blocked', audit: 'handoff.blocked' },
  unblock: { from: ['blocked'], to: 'claimed', audit: 'handoff.unblocked' },
  complete: { from: ['claimed'], to: 'completed', audit: 'handoff.completed' },
  cancel: { from: ['open', 'accepted', 'claimed', 'blocked'], to: 'cancelled', audit: 'handoff.cancelled' },
};

/** Statuses in which the assignee is working on the handoff (evidence is accepted then). */
export const IN_PROGRESS_STATUSES: readonly HandoffStatus[] = ['accepted', 'claimed', 'blocked'];
/** Statuses after which nothing changes any more. */
export const FINAL_STATUSES: readonly HandoffStatus[] = ['completed', 'cancelled'];

/** The 409 answer to an action the handoff's current status does not allow. */
export function invalidTransition(handoff: Handoff, action: HandoffAction): AppError {
  const rule = HANDOFF_TRANSITIONS[action];
  return new AppError({
    status: 409,
    code: 'handoff_invalid_transition',
    detail: `Cannot ${action} handoff '${handoff.id}': it is ${handoff.status} (${action} needs ${rule.from.join(' or ')}).`,
    extra: { current_status: handoff.status, action, allowed_from: rule.from },
  });
}

/**
 * Whether an agent may see a handoff: its own, or an open unassigned one of its workspace (which it may
 * claim). Anything else is reported as not found by the callers.
 */
export function agentCanSee(actor: AgentActor, handoff: Handoff): boolean {
  if (handoff.workspaceId !== actor.workspaceId) return false;
  if (handoff.assigneeAgentId === actor.agentId) return true;
  return handoff.assigneeAgentId === null && handoff.status === 'open';
}

/** Timestamps (and cleared fields) a transition writes besides the new status. */
export function transitionStamp(
  action: HandoffAction,
  current: Handoff,
  now: Date,
): Prisma.HandoffUncheckedUpdateManyInput {
  switch (action) {
    case 'accept':
      return { acceptedAt: now };
    case 'claim':
      return { claimedAt: now };
    case 'block':
      return { blockedAt: now };
    case 'unblock':
      // Blocked straight from `accepted`: unblocking is the moment the work is claimed.
      return { blockerReason: null, ...(current.claimedAt ? {} : { claimedAt: now }) };
    case 'complete':
      return { completedAt: now };
    case 'cancel':
      return { cancelledAt: now, blockerReason: null };
  }
}
