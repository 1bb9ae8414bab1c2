import type { WorkflowAuditEntry } from '../../data/audit.repository';
import type { DeliveryJob } from '../../data/delivery.queue';
import { updateInvocationFields } from '../../data/engine-pass.writer';
import type { InvocationFields } from '../../data/engine-pass.writer';
import type { Sql } from '../../db';
import type { WorkflowDeps } from '../../deps';
import type { Blocker } from '../../domain/blockers';
import type { RunLimits } from '../../domain/run-limits';
import type { Invocation } from '../../generated/prisma/client';
import type { ReconcilePlan } from './plan-reconcile';

/**
 * What the steps of one reconcile pass share: the invocation, locked for the pass's transaction and kept up to
 * date as the steps change it, the pass's clock, and what is to be done after the commit.
 */
export interface ReconcileContext {
  deps: WorkflowDeps;
  /** The pass's pooled connection, inside its transaction. */
  tx: Sql;
  invocation: Invocation;
  /** The run limits of its project and workspace, read with the invocation's lock. */
  limits: RunLimits;
  now: Date;
  /** Agents that got a new stage (told after the commit). */
  assignedAgents: string[];
  /** Delivery rows written in this transaction, enqueued after the commit. */
  deliveryJobs: DeliveryJob[];
  /** Whether hub handoffs were recorded to be closed (cancelled at the hub after the commit). */
  closesHandoffs: boolean;
  /** The hub's answers, asked before the transaction (null: the pass expected to need none). */
  plan: ReconcilePlan | null;
  /** Set when the pass reached a step the plan does not fit: the reconcile asks the hub again. */
  needsHub: boolean;
  /** Set when the plan's handoff was given to its stage. */
  usedPlannedHandoff: boolean;
  /** The engine's audit events of the pass, written together before its commit ({@link writeEngineEvents}). */
  events: WorkflowAuditEntry[];
}

/** What a step writes to the invocation ({@link updateInvocation}). */
export type InvocationPatch = Omit<InvocationFields, 'blockers'> & { blockers?: Blocker[] };

/** Writes `patch` to the invocation; the steps after this one read the updated row from the context. */
export async function updateInvocation(ctx: ReconcileContext, patch: InvocationPatch): Promise<void> {
  ctx.invocation = await updateInvocationFields(ctx.tx, ctx.invocation.id, patch, ctx.now);
}

/**
 * The engine's audit event about the invocation, or about one of its stages when `targetId` names it. It is
 * written with the pass's other events in one statement before the pass commits ({@link writeEngineEvents}), so
 * it commits or rolls back with the change it records.
 */
export async function auditEngineEvent(
  ctx: ReconcileContext,
  action: string,
  data: Record<string, unknown>,
  targetId?: string,
): Promise<void> {
  ctx.events.push({
    workspaceId: ctx.invocation.workspaceId,
    projectId: ctx.invocation.projectId,
    actor: { kind: 'service', service: 'workflow-engine' },
    action,
    targetType: targetId ? 'run_stage' : 'invocation',
    targetId: targetId ?? ctx.invocation.id,
    data: { invocation_id: ctx.invocation.id, ...data },
  });
}

/** Writes the audit events the pass gathered, in the pass's transaction (the last step before its commit). */
export async function writeEngineEvents(ctx: ReconcileContext): Promise<void> {
  const events = ctx.events.splice(0);
  await ctx.deps.audit.recordOn(ctx.tx, events, ctx.now);
}
