import type { ParticipantActor } from '@svc/auth';
import type { Request } from 'express';
import { projectOf } from '../auth/access-guard';
import type { MemberDirectory } from '../auth/member-directory';
import type { WorkflowDeps } from '../deps';
import type { ArtifactValidatorCache } from '../domain/artifact-schema-rules';
import { parseCorrelationId, parseIdempotencyKey } from '../domain/invocation-request';
import { presentEnvelope } from '../presenters/artifacts';
import { presentInvocation, presentInvocationSummary } from '../presenters/invocations';
import { cancelInvocation } from '../use-cases/invocations/cancel-invocation';
import { createInvocation } from '../use-cases/invocations/create-invocation';
import { decideApproval } from '../use-cases/invocations/decide-approval';
import { getArtifact } from '../use-cases/invocations/get-artifact';
import { getInvocation } from '../use-cases/invocations/get-invocation';
import type { InvocationChangeWaiter } from '../use-cases/invocations/get-invocation';
import { launchInvocation } from '../use-cases/invocations/launch-invocation';
import { listInvocations } from '../use-cases/invocations/list-invocations';
import { publishArtifact } from '../use-cases/invocations/publish-artifact';
import { retryInvocation } from '../use-cases/invocations/retry-invocation';
import { withSlotSetAside } from '../transport/fair-admission';
import { actorOf } from './types';
import type { WorkflowHandlers } from './types';

/** The invocation change waiter of one request, its admission slot set aside while it waits (decision 100). */
function invocationWaitsOf(req: Request, waits: InvocationChangeWaiter): InvocationChangeWaiter {
  return {
    watch(invocationId) {
      const watch = waits.watch(invocationId);
      return {
        next: (ms, signal) => withSlotSetAside(req, () => watch.next(ms, signal)),
        close: () => watch.close(),
      };
    },
    listening: () => waits.listening(),
    size: () => waits.size(),
  };
}

/** A repeatable query parameter arrives as one value or a list. */
const listOf = <T>(value: T | T[] | undefined): T[] | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value];

/** The operations on `/invocations` and `/invocations/{invocationId}/…`: from invoke to the artifact. */
export function invocationHandlers(
  deps: WorkflowDeps,
  extra: {
    validators: ArtifactValidatorCache;
    members: MemberDirectory;
    invocationWaits: InvocationChangeWaiter;
  },
): WorkflowHandlers<
  | 'createInvocation'
  | 'getInvocation'
  | 'listInvocations'
  | 'launchInvocation'
  | 'cancelInvocation'
  | 'retryInvocation'
  | 'decideInvocationApproval'
  | 'getInvocationArtifact'
  | 'publishInvocationArtifact'
> {
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
        search: q.q,
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
      const { wait = 0, state, attention } = ctx.query;
      // A held read ends when the caller goes away: its watch is released at once.
      const abort = new AbortController();
      const onClose = () => abort.abort();
      if (wait > 0) ctx.res.on('close', onClose);
      try {
        const { invocation, details } = await getInvocation(
          deps,
          projectOf(ctx).id,
          ctx.params.invocationId,
          {
            wait: { seconds: wait, ...(state ? { state } : {}), ...(attention ? { attention } : {}) },
            // The slot of a held read goes to others while it only waits (decision 100).
            waiter: invocationWaitsOf(ctx.req, extra.invocationWaits),
            signal: abort.signal,
          },
        );
        return { status: 200, body: { data: presentInvocation(invocation, details) } };
      } finally {
        ctx.res.off('close', onClose);
      }
    },
    async launchInvocation(ctx) {
      const { invocation, details, accepted, launch } = await launchInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        ctx.requestId,
      );
      const body = { data: presentInvocation(invocation, details), launch };
      return accepted ? { status: 202, body } : { status: 200, body };
    },
    async cancelInvocation(ctx) {
      const body = (ctx.body ?? {}) as { reason?: string };
      const { invocation, details } = await cancelInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        body.reason,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentInvocation(invocation, details) } };
    },
    async retryInvocation(ctx) {
      const { invocation, details, replayed } = await retryInvocation(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        {
          idempotencyKey: ctx.req.get('idempotency-key'),
          correlationId: ctx.req.get('x-correlation-id'),
          requestId: ctx.requestId,
        },
      );
      const body = { data: presentInvocation(invocation, details) };
      return replayed
        ? { status: 200, body, headers: { 'Idempotent-Replayed': 'true' } }
        : { status: 201, body };
    },
    async decideInvocationApproval(ctx) {
      const { invocation, details } = await decideApproval(
        deps,
        extra.members,
        actorOf(ctx.actor) as ParticipantActor,
        projectOf(ctx),
        ctx.params.invocationId,
        {
          decision: ctx.body.decision,
          ...(ctx.body.comment !== undefined ? { comment: ctx.body.comment } : {}),
        },
        ctx.requestId,
      );
      return { status: 200, body: { data: presentInvocation(invocation, details) } };
    },
    async getInvocationArtifact(ctx) {
      const artifact = await getArtifact(deps, projectOf(ctx).id, ctx.params.invocationId);
      return { status: 200, body: { data: presentEnvelope(artifact) } };
    },
    async publishInvocationArtifact(ctx) {
      const { artifact, replayed } = await publishArtifact(
        deps,
        extra.validators,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.invocationId,
        ctx.body,
        ctx.requestId,
      );
      return { status: replayed ? 200 : 201, body: { data: presentEnvelope(artifact) } };
    },
  };
}
