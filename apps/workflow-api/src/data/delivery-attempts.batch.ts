import type { Pool } from 'pg';
import { microBatcher } from '../domain/micro-batch';
import type { Settled } from '../domain/micro-batch';

/** The delivery and its subscription, as one attempt needs them. */
export interface AttemptRow {
  id: string;
  /** Recording order (bigint, as text). */
  seq: string;
  invocation_id: string;
  event: string;
  status: string;
  attempts: number;
  body: string;
  subscription_id: string;
  url: string;
  is_active: boolean;
  deleted_at: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  consecutive_exhaustions: number;
  rate_limit_per_second: number | null;
  ordered: boolean;
  workspace_id: string;
  project_id: string;
}

/** One attempt's record and the delivery's state after it. */
export interface AttemptRecord {
  attemptId: string;
  deliveryId: string;
  attempt: number;
  trigger: string;
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseSnippet: string;
  retriesStopped: boolean;
  status: 'pending' | 'succeeded' | 'failed';
  failureReason: string | null;
  nextAttemptAt: Date | null;
  completedAt: Date | null;
}

/**
 * The two statements of every attempt, shared by the attempts a worker runs at once: one read of the delivery
 * with its subscription for all of them, one statement recording all their attempts. Each caller still waits
 * for its own row to be read or written; a batch write that fails is tried again row by row, so one bad row
 * fails only its own attempt.
 */
export interface DeliveryAttemptStore {
  read(deliveryId: string): Promise<AttemptRow | undefined>;
  record(attempt: AttemptRecord): Promise<void>;
}

/** Most deliveries read or recorded by one statement. */
const MAX_BATCH = 200;
/** Statements of each kind running at once (the next batch collects meanwhile). */
const MAX_IN_FLIGHT = 2;

const READ = `
  SELECT d.id, d.seq::text AS seq, d.invocation_id, d.event, d.status, d.attempts, d.body, d.subscription_id, s.url,
         s.is_active, s.deleted_at, s.secret_sealed, s.previous_secret_sealed, s.previous_secret_expires_at,
         s.consecutive_exhaustions, s.rate_limit_per_second, s.ordered, s.workspace_id, s.project_id
    FROM deliveries d JOIN delivery_subscriptions s ON s.id = d.subscription_id
   WHERE d.id = ANY($1::text[])`;

/** Every attempt of the batch inserted, and each delivery updated from its own attempt, in one statement. */
const RECORD = `
  WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::timestamptz[], $6::int[], $7::int[],
                         $8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::timestamptz[],
                         $13::boolean[], $14::text[])
      AS t(attempt_id, delivery_id, attempt, trigger, started_at, status_code, latency_ms, error, snippet, status,
           next_attempt_at, completed_at, retries_stopped, failure_reason)
  ), recorded AS (
    INSERT INTO delivery_attempts (id, delivery_id, attempt, trigger, started_at, status_code, latency_ms, error,
                                   response_snippet, retries_stopped)
    SELECT attempt_id, delivery_id, attempt, trigger, started_at, status_code, latency_ms, error, snippet,
           retries_stopped
      FROM input)
  UPDATE deliveries d
     SET attempts = i.attempt, status = i.status, last_status_code = i.status_code,
         next_attempt_at = i.next_attempt_at, completed_at = i.completed_at, failure_reason = i.failure_reason
    FROM input i
   WHERE d.id = i.delivery_id`;

function recordParams(records: AttemptRecord[]): unknown[] {
  const column = <K extends keyof AttemptRecord>(key: K) => records.map((r) => r[key]);
  return [
    column('attemptId'),
    column('deliveryId'),
    column('attempt'),
    column('trigger'),
    column('startedAt'),
    column('statusCode'),
    column('latencyMs'),
    column('error'),
    column('responseSnippet'),
    column('status'),
    column('nextAttemptAt'),
    column('completedAt'),
    column('retriesStopped'),
    column('failureReason'),
  ];
}

const done = <O>(value: O): Settled<O> => ({ ok: true, value });

export function createDeliveryAttemptStore(pool: Pool): DeliveryAttemptStore {
  const read = microBatcher<string, AttemptRow | undefined>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    async run(ids) {
      const { rows } = await pool.query<AttemptRow>(READ, [[...new Set(ids)]]);
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => done(byId.get(id)));
    },
  });
  const writeBatch = (records: AttemptRecord[]) => pool.query(RECORD, recordParams(records));
  const record = microBatcher<AttemptRecord, void>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    // Two attempts of one delivery never share a statement (each must update the row after the other).
    key: (attempt) => attempt.deliveryId,
    async run(records) {
      try {
        await writeBatch(records);
        return records.map(() => done(undefined));
      } catch (error) {
        if (records.length === 1) return [{ ok: false, error }];
        // One row's fault must not fail the others: each on its own.
        const outcomes = await Promise.allSettled(records.map((r) => writeBatch([r])));
        return outcomes.map((o) =>
          o.status === 'fulfilled' ? done(undefined) : { ok: false, error: o.reason },
        );
      }
    },
  });
  return { read, record };
}
