import type { WorkflowApi } from '@svc/contracts';
import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import type { Invocation } from '../generated/prisma/client';
import { createInvocation, parseCorrelationId, parseIdempotencyKey } from '../use-cases/create-invocation';
import type { InvocationRoute } from '../use-cases/create-invocation';
import { getInvocation } from '../use-cases/get-invocation';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

type InvocationBody = WorkflowApi.components['schemas']['InvocationsInvocation'];

const EMPTY_ROUTE: InvocationRoute = {
  matched: false,
  selection: 'resolved',
  contract_id: null,
  template_key: null,
  template_version: null,
  winner_reason: null,
};

/** The wire shape of an invocation. Stage progress, handoff and artifact are filled once launch exists. */
export function presentInvocation(invocation: Invocation): InvocationBody {
  const route = { ...EMPTY_ROUTE, ...((invocation.route as Partial<InvocationRoute> | null) ?? {}) };
  return {
    invocation_id: invocation.id,
    project_id: invocation.projectId,
    state: invocation.state as InvocationBody['state'],
    attention: invocation.attention as InvocationBody['attention'],
    route,
    correlation_id: invocation.correlationId,
    created_at: invocation.createdAt.toISOString(),
    updated_at: invocation.updatedAt.toISOString(),
    stages: [],
    current_stage: null,
    latest_handoff: null,
    artifact: null,
  };
}

export function invocationHandlers(
  deps: WorkflowDeps,
): WorkflowHandlers<'createInvocation' | 'getInvocation'> {
  return {
    async createInvocation(ctx) {
      const idempotencyKey = parseIdempotencyKey(ctx.req.get('idempotency-key'));
      const correlationId = parseCorrelationId(ctx.req.get('x-correlation-id'));
      const { invocation, replayed } = await createInvocation(deps, actorOf(ctx.actor), projectOf(ctx), {
        idempotencyKey,
        correlationId,
        body: ctx.body,
        requestId: ctx.requestId,
      });
      const body = { data: presentInvocation(invocation) };
      return replayed
        ? { status: 200, body, headers: { 'Idempotent-Replayed': 'true' } }
        : { status: 201, body };
    },
    async getInvocation(ctx) {
      const invocation = await getInvocation(deps, projectOf(ctx).id, ctx.params.invocationId);
      return { status: 200, body: { data: presentInvocation(invocation) } };
    },
  };
}
