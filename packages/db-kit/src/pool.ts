import { Pool } from 'pg';
import { clientConfig } from './connection';

export interface CreatePoolOptions {
  /** Maximum number of connections (default 10). */
  max?: number;
  /** Close connections idle for this long (default 30 s). */
  idleTimeoutMillis?: number;
  /** Give up opening a connection after this long (default 5 s). */
  connectionTimeoutMillis?: number;
  /** Shown in pg_stat_activity; set it to the service name. A URL `?application_name=` wins over it. */
  applicationName?: string;
  /** Server-side `statement_timeout` for every connection, in ms (default: none). */
  statementTimeoutMillis?: number;
  /**
   * Client-side bound on every query, in ms (default: none): a connection whose server vanished without closing
   * it would otherwise leave the query (and whatever awaits it) pending forever.
   */
  queryTimeoutMillis?: number;
  /**
   * Called when an idle connection fails (e.g. the server restarted). node-postgres emits these on the pool and
   * an unhandled one would crash the process; the default ignores it, and the next query reports the problem.
   */
  onError?: (err: Error) => void;
}

/** What a pool's connections have sent so far: see {@link poolCounts}. */
export interface PoolCounts {
  /** Every `query` call of a pooled client: each is a round trip, `BEGIN` and `COMMIT` included. */
  statements: number;
  /** Transactions begun: each `BEGIN`, and each statement sent outside one (it commits on its own). */
  transactions: number;
}

const counts = new WeakMap<Pool, PoolCounts>();
/** When a statement of the pool's last got an answer (ms), for {@link checkDatabase} on a busy pool. */
const answers = new WeakMap<Pool, { lastAt: number | undefined }>();
/** Whether each pooled client is inside a transaction its borrower began. */
const inTransaction = new WeakMap<object, { inTransaction: boolean }>();

/**
 * The statements and transactions this pool's connections have sent so far, or undefined for a pool
 * {@link createPool} did not make: plain counts, so that services can export them
 * (`svc_db_statements_total`, `svc_db_transactions_total`) at the cost of an addition and a look at the
 * statement's first word.
 */
export function poolCounts(pool: Pool): PoolCounts | undefined {
  return counts.get(pool);
}

const BEGINS = /^\s*(?:BEGIN|START\s+TRANSACTION)\b/i;
const ENDS = /^\s*(?:COMMIT|END|ROLLBACK(?!\s+TO\b))\b/i;

function statementText(config: unknown): string | undefined {
  if (typeof config === 'string') return config;
  const text = (config as { text?: unknown } | null)?.text;
  return typeof text === 'string' ? text : undefined;
}

/** A `pg.Pool` for `url` with production defaults (honours Prisma's `?schema=` by setting search_path). */
export function createPool(url: string, opts: CreatePoolOptions = {}): Pool {
  const pool = new Pool({
    ...clientConfig(url),
    max: opts.max ?? 10,
    idleTimeoutMillis: opts.idleTimeoutMillis ?? 30_000,
    connectionTimeoutMillis: opts.connectionTimeoutMillis ?? 5_000,
    ...(opts.applicationName === undefined ? {} : { application_name: opts.applicationName }),
    ...(opts.statementTimeoutMillis === undefined ? {} : { statement_timeout: opts.statementTimeoutMillis }),
    ...(opts.queryTimeoutMillis === undefined ? {} : { query_timeout: opts.queryTimeoutMillis }),
  });
  const onError = opts.onError ?? (() => undefined);
  pool.on('error', onError);
  // A client that is checked out (e.g. held by a transaction) reports a dropped connection on itself, not on the
  // pool; without a listener that 'error' event would crash the process when the server restarts.
  const count: PoolCounts = { statements: 0, transactions: 0 };
  counts.set(pool, count);
  const answered = { lastAt: undefined as number | undefined };
  answers.set(pool, answered);
  const markAnswered = () => {
    answered.lastAt = Date.now();
  };
  const ignore = () => undefined;
  pool.on('connect', (client) => {
    client.on('error', onError);
    // Pooled queries, transactions and Prisma's driver adapter all go through the checked-out client's query.
    const query = client.query;
    const state = { inTransaction: false };
    inTransaction.set(client, state);
    client.query = function countedQuery(this: typeof client, ...args: unknown[]) {
      count.statements += 1;
      const text = statementText(args[0]);
      if (text !== undefined && BEGINS.test(text)) {
        state.inTransaction = true;
        count.transactions += 1;
      } else if (text !== undefined && ENDS.test(text)) {
        state.inTransaction = false;
      } else if (!state.inTransaction) {
        count.transactions += 1;
      }
      // Whether the database answers, for the readiness check of a busy pool: a callback (pool.query's own
      // form) or the promise of the result.
      const last = args[args.length - 1];
      if (typeof last === 'function') {
        args[args.length - 1] = function answeredCallback(this: unknown, error: unknown, ...rest: unknown[]) {
          if (!error) markAnswered();
          return (last as (...a: unknown[]) => unknown).call(this, error, ...rest);
        };
      }
      const result = (query as (...a: unknown[]) => unknown).apply(this, args);
      if (typeof (result as Promise<unknown> | undefined)?.then === 'function')
        (result as Promise<unknown>).then(markAnswered, ignore);
      return result;
    } as typeof client.query;
  });
  // A client comes back to the pool outside any transaction of its borrower's.
  pool.on('release', (_error, client) => {
    const state = inTransaction.get(client);
    if (state) state.inTransaction = false;
  });
  return pool;
}

export interface CheckDatabaseOptions {
  /** Fail when the check takes longer than this (default 2000 ms). */
  timeoutMs?: number;
  /**
   * With every connection of the pool in use, a statement answered within this long counts as the check
   * (default {@link BUSY_ANSWER_MS}).
   */
  busyAnswerMs?: number;
}

/**
 * How long a pool whose every connection is in use counts as busy rather than broken after the database's last
 * answer. Longer than a stall of the database's disk (commits wait for their WAL flush, seconds on a loaded
 * host): such a stall holds every replica's statements alike, and failing readiness on all of them at once
 * would turn slow into down behind the load balancer. A database that stops answering for longer fails the
 * check, as Kubernetes' default readiness would after three failed 10 s probes.
 */
export const BUSY_ANSWER_MS = 30_000;

/**
 * Readiness probe: runs `select 1` on the pool and resolves when it answers within the timeout (default 2 s),
 * waiting for a free connection included. Throws otherwise.
 *
 * A pool whose connections are all in use while the database keeps answering is busy, not broken: queued behind
 * a burst, the probe would time out on every replica at once and the load balancer would take them all out
 * together. So when no connection is free and one of the pool's statements got an answer within `busyAnswerMs`,
 * the check passes without queuing; a database that stops answering fails it once that time is past.
 */
export async function checkDatabase(pool: Pool, opts: CheckDatabaseOptions = {}): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  const lastAnswerAt = answers.get(pool)?.lastAt;
  const max = (pool as Pool & { options: { max?: number } }).options.max ?? 10;
  if (
    lastAnswerAt !== undefined &&
    Date.now() - lastAnswerAt < (opts.busyAnswerMs ?? BUSY_ANSWER_MS) &&
    pool.idleCount === 0 &&
    pool.totalCount >= max
  )
    return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  // query_timeout makes node-postgres give up on (and discard) a connection that never answers.
  const config = { text: 'select 1 as ok', query_timeout: timeoutMs };
  const query = pool.query<{ ok: number }>(config);
  let result: Awaited<typeof query> | 'timeout';
  try {
    result = await Promise.race([query, timeout]);
  } catch (err) {
    throw new Error(`database check failed: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
  if (result === 'timeout') {
    // The query may still fail later; nobody awaits it any more.
    query.catch(() => undefined);
    throw new Error(`database check timed out after ${timeoutMs} ms`);
  }
  if (result.rows[0]?.ok !== 1) throw new Error('database check returned an unexpected result');
}
