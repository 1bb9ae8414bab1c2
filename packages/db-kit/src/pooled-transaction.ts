import type { Pool, PoolClient } from 'pg';

/**
 * Runs `fn` in a transaction on one connection of the pool: `BEGIN`, what `fn` sends, `COMMIT` — or `ROLLBACK`
 * when it throws (the error passed on) or when `commitIf` says its result is not to be kept (the result is
 * answered all the same). For a hot path whose few statements are plain SQL: no round trip besides its own
 * statements and the two that bound them. A connection whose `ROLLBACK` fails is closed rather than lent again.
 */
export async function inPooledTransaction<T>(
  pool: Pool,
  fn: (client: PoolClient) => Promise<T>,
  options: { commitIf?: (result: T) => boolean } = {},
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    let result: T;
    try {
      await client.query('BEGIN');
      result = await fn(client);
      if (options.commitIf && !options.commitIf(result)) broken = await rollback(client);
      else await client.query('COMMIT');
    } catch (error) {
      broken = await rollback(client);
      throw error;
    }
    return result;
  } finally {
    client.release(broken);
  }
}

async function rollback(client: PoolClient): Promise<Error | undefined> {
  try {
    await client.query('ROLLBACK');
    return undefined;
  } catch (error) {
    // The connection is unusable: the pool must close it rather than lend it again.
    return error as Error;
  }
}
