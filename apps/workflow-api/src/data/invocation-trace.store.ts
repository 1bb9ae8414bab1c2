import { currentTraceparent, tracingEnabled } from '@svc/service-kit';
import type { Logger, Redis } from '@svc/service-kit';

/** How long an invocation's trace context is kept (runs rarely last longer; after that jobs start new traces). */
const TRACE_TTL_SECONDS = 7 * 24 * 60 * 60;

/** Trace fields of a job's data: the trace it continues and the request or job that caused it. */
export interface JobTrace {
  traceparent?: string;
  /** The span that enqueued the job when it is not the parent (a link, not a parent). */
  traceLink?: string;
}

/**
 * While tracing is on, every job of an invocation continues the invocation's trace: the first job enqueued for
 * it (its launch) records the enqueuing span's `traceparent` in Redis, and later jobs (the reconcile after a
 * stage, the deliveries of its events) take that as their parent and link the span that enqueued them. So
 * one trace follows an invocation from its invoke to its deliveries, whoever made the requests in between. The
 * context is telemetry only: when Redis lost it, a job continues the span that enqueued it instead. While
 * tracing is off this does nothing.
 */
export async function jobTraces(
  redis: Redis | undefined,
  prefix: string,
  invocationIds: (string | undefined)[],
  logger: Logger,
): Promise<JobTrace[]> {
  if (!tracingEnabled()) return invocationIds.map(() => ({}));
  const current = currentTraceparent();
  const known = invocationIds.filter((id): id is string => id !== undefined);
  let stored: (string | null)[] = [];
  if (redis && known.length > 0) {
    try {
      stored = await redis.mget(...known.map((id) => traceKey(prefix, id)));
      const fresh = [...new Set(known.filter((_id, i) => !stored[i]))];
      if (current && fresh.length > 0) {
        const batch = redis.multi();
        for (const id of fresh) batch.set(traceKey(prefix, id), current, 'EX', TRACE_TTL_SECONDS, 'NX');
        await batch.exec();
      }
    } catch (error) {
      logger.debug({ err: error }, 'invocation trace context unavailable');
      stored = [];
    }
  }
  const byId = new Map(known.map((id, i) => [id, stored[i] ?? undefined]));
  return invocationIds.map((id) => {
    const parent = (id !== undefined ? byId.get(id) : undefined) ?? current;
    if (!parent) return {};
    return current && current !== parent
      ? { traceparent: parent, traceLink: current }
      : { traceparent: parent };
  });
}

function traceKey(prefix: string, invocationId: string): string {
  return `${prefix}:workflow:trace:${invocationId}`;
}
