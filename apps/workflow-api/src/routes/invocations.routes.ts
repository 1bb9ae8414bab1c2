import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { parseCorrelationId, parseIdempotencyKey } from '../domain/invocation-request';
import { presentInvocation } from '../presenters/invocations';
import { createInvocation } from '../use-cases/invocations/create-invocation';
import { getInvocation } from '../use-cases/invocations/get-invocation';
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
      const { invocation, details } = await getInvocation(deps, projectOf(ctx).id, ctx.params.invocationId);
      return { status: 200, body: { data: presentInvocation(invocation, details) } };
    },
  };
}
