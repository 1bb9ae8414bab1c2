// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testDatabaseServerUrl } from '../../testing/src/servers';
import { Pool } from 'pg';
import { BUSY_ANSWER_MS, checkDatabase, createPool, poolCounts } from './pool';

const SERVER = testDatabaseServerUrl();

describe('createPool', () => {
  it('when created with defaults and a name, then max is 10 and the server sees the application name', async () => {
    const pool = createPool(SERVER, { applicationName: 'db-kit-pool-test' });
    try {
      expect(pool.options.max).toBe(10);
      expect(pool.options.idleTimeoutMillis).toBe(30_000);
      const result = await pool.query<{ name: string }>('select current_setting($1) as name', [
        'application_name',
      ]);
      expect(result.rows).toEqual([{ name: 'db-kit-pool-test' }]);
    } finally {
      await pool.end();
    }
  });

  it('when the URL names a schema, then connections use it as search_path', async () => {
    const pool = createPool(`${SERVER}?schema=hub`, { max: 1 });
    try {
      const result = await pool.query<{ search_path: string }>('show search_path');
      expect(result.rows).toEqual([{ search_path: 'hub' }]);
    } finally {
      await pool.end();
    }
  });
});

describe('poolCounts', () => {
  it('when queries run on the pool and in transactions, then each statement and each transaction is counted once', async () => {
    const pool = createPool(SERVER, { max: 2 });
    try {
      expect(poolCounts(pool)).toEqual({ statements: 0, transactions: 0 });
      await pool.query('select 1');
      await Promise.all([pool.query('select 2'), pool.query('select 3')]);
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('select 4');
        await client.query('COMMIT');
        await client.query({ text: 'start transaction' });
        await client.query({ text: 'select $1::int', values: [5] });
        await client.query('rollback');
      } finally {
        client.release();
      }
      // Three statements on their own, two transactions of two statements and their BEGIN and end.
      expect(poolCounts(pool)).toEqual({ statements: 9, transactions: 5 });
    } finally {
      await pool.end();
    }
  });

  it('when the pool was not made by createPool, then there is no count', () => {
    expect(poolCounts(new Pool())).toBeUndefined();
  });
});

describe('checkDatabase', () => {
  it('when the database answers, then it resolves', async () => {
    const pool = createPool(SERVER, { max: 1 });
    try {
      await expect(checkDatabase(pool)).resolves.toBeUndefined();
    } finally {
      await pool.end();
    }
  });

  it('when the server is unreachable, then it rejects with the cause', async () => {
    const pool = createPool('postgresql://postgres@127.0.0.1:1/postgres', { max: 1 });
    try {
      await expect(checkDatabase(pool)).rejects.toThrow(/database check failed: .*ECONNREFUSED/);
    } finally {
      await pool.end();
    }
  });

  it('when every connection is in use and the database answered a moment ago, then it passes without queuing', async () => {
    const pool = createPool(SERVER, { max: 1 });
    const busy = await pool.connect();
    try {
      await busy.query('select 1');
      // A request queued for the connection, as under a burst.
      const queued = pool.query('select 2 as two');
      await expect(checkDatabase(pool, { timeoutMs: 150 })).resolves.toBeUndefined();
      busy.release();
      expect((await queued).rows[0]).toEqual({ two: 2 });
    } finally {
      await pool.end();
    }
  });

  it('when every connection is in use and the last answer is 10 s old (a stalled disk), then it still passes', async () => {
    const pool = createPool(SERVER, { max: 1 });
    const busy = await pool.connect();
    const now = jest.spyOn(Date, 'now');
    try {
      await busy.query('select 1');
      const answeredAt = Date.now();
      now.mockReturnValue(answeredAt + 10_000);
      await expect(checkDatabase(pool, { timeoutMs: 150 })).resolves.toBeUndefined();
      now.mockReturnValue(answeredAt + BUSY_ANSWER_MS + 1);
      await expect(checkDatabase(pool, { timeoutMs: 150 })).rejects.toThrow(
        'database check timed out after 150 ms',
      );
    } finally {
      now.mockRestore();
      busy.release();
      await pool.end();
    }
  });

  it('when every connection is in use and no answer is recent, then it queues like any statement and times out', async () => {
    const pool = createPool(SERVER, { max: 1 });
    const busy = await pool.connect();
    try {
      await busy.query('select 1');
      await expect(checkDatabase(pool, { timeoutMs: 150, busyAnswerMs: 0 })).rejects.toThrow(
        'database check timed out after 150 ms',
      );
    } finally {
      busy.release();
      await pool.end();
    }
  });

  it('when no connection frees up in time, then it rejects after the timeout', async () => {
    const pool = createPool(SERVER, { max: 1 });
    const busy = await pool.connect();
    try {
      const started = Date.now();
      await expect(checkDatabase(pool, { timeoutMs: 150 })).rejects.toThrow(
        'database check timed out after 150 ms',
      );
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      busy.release();
      await pool.end();
    }
  });
});
