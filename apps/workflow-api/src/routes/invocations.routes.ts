import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { parseCorrelationId, parseIdempotencyKey } from '../domain/invocation-request';
import { presentInvocation, presentInvocationSummary } from '../presenters/invocations';
import { createInvocation } from '../use-cases/invocations/create-invocation';
import { getInvocation } from '../use-cases/invocations/get-invocation';
import { listInvocations } from '../use-cases/invocations/list-invocations';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

/** A repeatable query parameter arrives as one value or a list. */
const listOf = <T>(value: T | T[] | undefined): T[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

export function invocationHandlers(
  deps: WorkflowDeps,
): WorkflowHandlers<'createInvocation' | 'getInvocation' | 'listInvocations'> {
  return {
    async listInvocations(ctx) {
      const q = ctx.query;
      const page = await listInvocations(deps, projectOf(ctx).id, {
        states: listOf(q.state),
        attentions: listOf(q.attention),
        contractId: q.contract_id,
        templateKey: q.template_key,
        templateVersion: q.template_version,
        createdSince: q.created_since,
        createdUntil: q.created_until,
        limit: q.limit,
        cursor: q.cursor,
      });
      return {
        status: 200,
        body: { data: page.items.map(presentInvocationSummary), next_cursor: page.nextCursor },
      };
    },
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
