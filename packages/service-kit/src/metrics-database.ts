import { poolCounts } from '@svc/db-kit';
import type { PrismaDatabase } from '@svc/db-kit';
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/**
 * Database series of a service process, read from its pool on each scrape (nothing is counted per statement
 * but an addition in the pool):
 * - `svc_db_statements_total`: statements the process sent to PostgreSQL (each a round trip; `BEGIN` and
 *   `COMMIT` count), so a dashboard or a bench can say how many a request, a job or a run costs;
 * - `svc_db_transactions_total`: transactions it began (each `BEGIN`, and each statement sent on its own);
 * - `svc_db_pool_connections{state}`: the pool's connections, `total` and `idle`, and the callers `waiting`
 *   for one (a pool too small for the load shows here first).
 */
export function registerDatabaseMetrics(registry: Registry, pool: PrismaDatabase<unknown>['pool']): void {
  new Counter({
    name: 'svc_db_statements_total',
    help: 'Statements sent to PostgreSQL by this process (each query a round trip, BEGIN and COMMIT included).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(poolCounts(pool)?.statements ?? 0);
    },
  });
  new Counter({
    name: 'svc_db_transactions_total',
    help: 'Transactions this process began in PostgreSQL (each BEGIN, and each statement sent on its own).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(poolCounts(pool)?.transactions ?? 0);
    },
  });
  new Gauge({
    name: 'svc_db_pool_connections',
    help: "The database pool's connections (total, idle) and the callers waiting for one (waiting).",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });
}
