// What PostgreSQL and Redis spent on a measurement: the CPU time of the backends serving a database, the
// database's own counters, and the Redis server's CPU time. Not a bench itself.
import { sleep } from './stack.mjs';
import { processCpuMs } from './proc.mjs';

/** CPU milliseconds of every Postgres backend serving `client`'s database (but `client`'s own), by pid. */
export async function backendCpu(client) {
  const { rows } = await client.query(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  const byPid = new Map();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) byPid.set(pid, ms);
  }
  return byPid;
}

/** CPU the backends used between two {@link backendCpu} readings (a backend that appeared in between counts from zero). */
export function diffBackendCpu(before, after) {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/**
 * The counters of `client`'s database (commits, rows inserted, updated, fetched), read again until
 * `ready(row)` holds or 15 s pass: other backends report their statistics late.
 */
export async function databaseStats(client, ready) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const row = (
      await client.query(
        'SELECT xact_commit, tup_inserted, tup_updated, tup_fetched FROM pg_stat_database ' +
          'WHERE datname = current_database()',
      )
    ).rows[0];
    if (ready(row) || Date.now() > deadline) return row;
    await sleep(250);
  }
}

/** The Redis server's own CPU milliseconds so far (the whole server, shared with anything else using it). */
export async function redisCpuMs(redis) {
  const info = await redis.info('cpu');
  const read = (key) => Number(new RegExp(`^${key}:([\\d.]+)`, 'm').exec(info)?.[1]);
  return (read('used_cpu_sys') + read('used_cpu_user')) * 1000;
}

/** Commands the Redis server has processed so far (the whole server, shared with anything else using it). */
export async function redisCommands(redis) {
  const info = await redis.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1]);
}

/** Inserts `rows` (arrays of values in the order of `columns`) into `table` in one statement. */
export async function insertRows(client, table, columns, rows) {
  const values = [];
  const tuples = rows.map((row) => `(${row.map((v) => `$${values.push(v)}`).join(', ')})`);
  await client.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')}`, values);
}
