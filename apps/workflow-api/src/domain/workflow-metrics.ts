import { Counter, Gauge, Histogram } from '@svc/service-kit';
import type { Logger, Registry } from '@svc/service-kit';
import type { DeliveryResult } from './delivery-result';

/** Upper bounds (seconds) of the delivery attempt latency histogram: 10 ms to the longest timeout (60 s). */
export const DELIVERY_LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30, 60];

/** Counts delivery attempts where they happen (the delivery worker). */
export interface DeliveryMetrics {
  attempted(result: Pick<DeliveryResult, 'status' | 'error' | 'latencyMs'>): void;
}

/**
 * The outcome label of an attempt: `succeeded` (2xx), `http_<class>xx` for any other answer (410 is
 * `http_4xx`), or the sender's stable failure code when no complete answer arrived (`timeout`,
 * `connection_refused`, `tls_error`, a delivery URL code, …): a bounded set, never a URL or a host.
 */
export function deliveryOutcome(result: Pick<DeliveryResult, 'status' | 'error'>): string {
  if (result.error === null && result.status !== null) {
    if (result.status >= 200 && result.status < 300) return 'succeeded';
    return `http_${Math.floor(result.status / 100)}xx`;
  }
  return result.error ?? 'network_error';
}

/**
 * `svc_workflow_delivery_attempts_total{outcome}` and `svc_workflow_delivery_attempt_duration_seconds{result}`
 * (`result` is `succeeded` or `failed`, so the histogram stays small while the counter says why).
 */
export function createDeliveryMetrics(registry: Registry): DeliveryMetrics {
  const attempts = new Counter({
    name: 'svc_workflow_delivery_attempts_total',
    help: 'Delivery attempts by outcome: succeeded, http_<class>xx, or the transport failure code.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'svc_workflow_delivery_attempt_duration_seconds',
    help: 'Time from sending a delivery to its complete answer or failure, by result (succeeded, failed).',
    labelNames: ['result'] as const,
    buckets: DELIVERY_LATENCY_BUCKETS,
    registers: [registry],
  });
  attempts.inc({ outcome: 'succeeded' }, 0);
  return {
    attempted(result) {
      const outcome = deliveryOutcome(result);
      attempts.inc({ outcome });
      latency.observe({ result: outcome === 'succeeded' ? 'succeeded' : 'failed' }, result.latencyMs / 1000);
    },
  };
}

export interface InvocationCount {
  state: string;
  attention: string;
  count: number;
}

/**
 * `svc_workflow_invocations{state,attention}`: invocations in Postgres by state and attention, counted by
 * `count` on scrape. The count is the truth whichever process or replica changed a row, survives restarts,
 * and needs no hook in the use cases that move invocations; it is one grouped query, run at most once per
 * `minIntervalMs` (scrapes in between, and concurrent ones, reuse the last answer). A failed count drops the
 * series rather than repeat stale numbers.
 */
export function registerInvocationGauge(
  registry: Registry,
  options: { count: () => Promise<InvocationCount[]>; logger: Logger; minIntervalMs?: number },
): void {
  const minIntervalMs = options.minIntervalMs ?? 5_000;
  let last: { at: number; rows: InvocationCount[] } | undefined;
  let pending: Promise<InvocationCount[]> | undefined;
  const read = (): Promise<InvocationCount[]> => {
    if (last && Date.now() - last.at < minIntervalMs) return Promise.resolve(last.rows);
    pending ??= options
      .count()
      .then((rows) => {
        last = { at: Date.now(), rows };
        return rows;
      })
      .finally(() => {
        pending = undefined;
      });
    return pending;
  };
  new Gauge({
    name: 'svc_workflow_invocations',
    help: 'Invocations by state and attention signal (counted in Postgres on scrape).',
    labelNames: ['state', 'attention'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const row of await read()) this.set({ state: row.state, attention: row.attention }, row.count);
      } catch (error) {
        options.logger.warn({ err: error }, 'invocation counts unavailable for metrics');
      }
    },
  });
}

/** What the sweeper did, counted where it runs (every worker replica runs one). */
export interface SweeperMetrics {
  /**
   * Work handed to the queue again: outbox rows, fresh reconciles, deliveries, handoff closures retried, and
   * reconciles of runs whose stage owner went silent (the engine asks the hub whether it still runs).
   */
  requeued(kind: 'outbox' | 'recheck' | 'delivery' | 'handoff' | 'owner_check', count: number): void;
  /** Overdue pending deliveries the sweeper asked the queue about: still held (left alone) or missing. */
  deliveriesChecked(held: number, missing: number): void;
}

/**
 * `svc_workflow_sweeper_requeued_total{kind}` and `svc_workflow_sweeper_deliveries_checked_total{queue}`
 * (`queue` is `held` or `missing`). A healthy worker under a backlog checks many deliveries and re-enqueues none.
 */
export function createSweeperMetrics(registry: Registry): SweeperMetrics {
  const requeued = new Counter({
    name: 'svc_workflow_sweeper_requeued_total',
    help: 'Work the sweeper handed to the queue again, by kind: outbox, recheck, delivery, handoff, owner_check.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const checked = new Counter({
    name: 'svc_workflow_sweeper_deliveries_checked_total',
    help: 'Overdue pending deliveries the sweeper looked up in the queue, by answer: held or missing.',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  for (const kind of ['outbox', 'recheck', 'delivery', 'handoff', 'owner_check'] as const)
    requeued.inc({ kind }, 0);
  checked.inc({ queue: 'held' }, 0);
  checked.inc({ queue: 'missing' }, 0);
  return {
    requeued(kind, count) {
      if (count > 0) requeued.inc({ kind }, count);
    },
    deliveriesChecked(held, missing) {
      if (held > 0) checked.inc({ queue: 'held' }, held);
      if (missing > 0) checked.inc({ queue: 'missing' }, missing);
    },
  };
}

/** The admission of the Workflow API's requests, read on scrape (decision 100). */
export interface AdmissionGaugeSource {
  stats(): { inFlight: number; queued: number; waitingKeys: number };
}

/**
 * `svc_workflow_admission_in_flight`, `svc_workflow_admission_queued` and `svc_workflow_admission_waiting_keys`
 * (read on scrape), and `svc_workflow_admission_refused_total{reason}` (`queue_timeout`, `queue_full`,
 * `client_gone`): requests answered 503 `overloaded` instead of being admitted. Returns the refusal counter.
 */
export function registerAdmissionMetrics(
  registry: Registry,
  admission: AdmissionGaugeSource,
): { refused(reason: 'queue_timeout' | 'queue_full' | 'client_gone'): void } {
  const gauges = [
    ['svc_workflow_admission_in_flight', 'Requests admitted and not yet answered.', 'inFlight'],
    ['svc_workflow_admission_queued', 'Requests waiting for their turn to be admitted.', 'queued'],
    ['svc_workflow_admission_waiting_keys', 'Projects (or agents) with requests waiting.', 'waitingKeys'],
  ] as const;
  for (const [name, help, field] of gauges) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(admission.stats()[field]);
      },
    });
  }
  const refused = new Counter({
    name: 'svc_workflow_admission_refused_total',
    help: 'Requests answered 503 overloaded instead of admitted, by reason: queue_timeout, queue_full, client_gone.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['queue_timeout', 'queue_full', 'client_gone'] as const) refused.inc({ reason }, 0);
  return { refused: (reason) => refused.inc({ reason }) };
}
