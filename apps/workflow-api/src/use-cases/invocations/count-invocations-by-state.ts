import type { WorkflowDeps } from '../../deps';

/**
 * Invocations by state and attention across every workspace, for the metrics gauge: one grouped query in a
 * read-only transaction whose statement timeout bounds it on a very large table (the gauge then goes
 * without it for that scrape).
 */
export async function countInvocationsByState(
  deps: Pick<WorkflowDeps, 'pool'>,
  timeoutMs = 2_000,
): Promise<{ state: string; attention: string; count: number }[]> {
  const client = await deps.pool.connect();
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${Math.max(1, Math.floor(timeoutMs))}`);
    const result = await client.query<{ state: string; attention: string; count: number }>(
      `SELECT state, attention, count(*)::int AS count FROM invocations GROUP BY state, attention`,
    );
    await client.query('COMMIT');
    return result.rows;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
