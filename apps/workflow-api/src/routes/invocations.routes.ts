import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { loadRunDetails, presentInvocation } from '../engine/invocation-view';
import { createInvocation, parseCorrelationId, parseIdempotencyKey } from '../use-cases/create-invocation';
import { getInvocation } from '../use-cases/get-invocation';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

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
      return {
        status: 200,
        body: { data: presentInvocation(invocation, await loadRunDetails(deps.db, invocation.id)) },
      };
    },
  };
}
