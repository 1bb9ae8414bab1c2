// What a measured stretch of work cost a whole stack, per unit of work (a run, a delivery): the CPU of every
// process (each service, the agents, the PostgreSQL backends of each database, the Redis server, the bench
// itself) and what the services counted themselves (statements and transactions sent to PostgreSQL, HTTP
// requests answered, by operation). A snapshot before and one after; the difference divided by the units done.
// Not a bench itself.
import { backendCpu, diffBackendCpu, redisCommands, redisCpuMs } from './data-stores.mjs';
import { cpuMs, machineCpuMs, ownCpuMs } from './proc.mjs';
import { requireFrom, testing } from './cli.mjs';
import { f, printTable } from './report.mjs';

/**
 * The series a service's `/metrics` gives the meter: its database round trips and its requests by operation,
 * summed over its replicas when `urls` is a list.
 */
async function serviceCounters(urls, whose) {
  const each = await Promise.all([].concat(urls).map((url) => replicaCounters(url, whose)));
  const operations = {};
  for (const counted of each)
    for (const [operation, n] of Object.entries(counted.operations))
      operations[operation] = (operations[operation] ?? 0) + n;
  const sum = (key) => each.reduce((total, counted) => total + counted[key], 0);
  return { statements: sum('statements'), transactions: sum('transactions'), operations };
}

async function replicaCounters(url, whose) {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${whose} /metrics answered ${res.status}`);
  const samples = testing().parseMetrics(await res.text());
  const value = (name) => testing().metricValue(samples, name) ?? 0;
  const operations = {};
  for (const sample of samples) {
    // The meter's own scrapes are not part of the work measured.
    if (sample.name !== 'svc_http_requests_total' || sample.labels.operation === 'metrics') continue;
    const operation = sample.labels.operation ?? 'unknown';
    operations[operation] = (operations[operation] ?? 0) + sample.value;
  }
  return {
    statements: value('svc_db_statements_total'),
    transactions: value('svc_db_transactions_total'),
    operations,
  };
}

/**
 * A meter over a stack. `processes` maps a name to a function giving the pids to count (several for the
 * agents); `databases` maps a name to a connection URL (the meter opens one client on each, to find the
 * backends that serve it); `services` maps a name to its `/metrics` URL (or the URLs of its replicas, summed);
 * `redisUrl` is the Redis server whose CPU counts (the whole server: anything else using it at the same time
 * counts too). Each result also says how much of the machine's CPU was left idle in between (`machine_idle_pct`,
 * all CPUs, from /proc/stat: whatever else runs on the machine uses it too).
 */
export async function openCostMeter({ processes, databases, services, redisUrl }) {
  const { Client } = requireFrom('packages/db-kit', 'pg');
  const Redis = requireFrom('apps/workflow-api', 'ioredis');
  const clients = {};
  for (const [name, url] of Object.entries(databases)) {
    const client = new Client({ connectionString: url, application_name: 'bench-cost-meter' });
    await client.connect();
    clients[name] = client;
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();

  async function snapshot() {
    const cpu = {};
    for (const [name, pids] of Object.entries(processes)) cpu[name] = cpuMs(pids());
    const backends = {};
    for (const [name, client] of Object.entries(clients)) backends[name] = await backendCpu(client);
    const counters = {};
    for (const [name, url] of Object.entries(services)) counters[name] = await serviceCounters(url, name);
    const [redisMs, commands] = [await redisCpuMs(redis), await redisCommands(redis)];
    const machine = machineCpuMs();
    return { cpu, backends, counters, redis: redisMs, redisCommands: commands, bench: ownCpuMs(), machine };
  }

  /** What happened between two snapshots, per unit of work (`units` of them were done in between). */
  function per(before, after, units) {
    const cpu = {};
    for (const name of Object.keys(processes)) cpu[name] = (after.cpu[name] - before.cpu[name]) / units;
    for (const name of Object.keys(clients))
      cpu[`postgres (${name})`] = diffBackendCpu(before.backends[name], after.backends[name]) / units;
    cpu.redis = (after.redis - before.redis) / units;
    cpu.bench = (after.bench - before.bench) / units;
    cpu.total = Object.values(cpu).reduce((sum, ms) => sum + ms, 0);
    const statements = {};
    const transactions = {};
    const requests = {};
    for (const name of Object.keys(services)) {
      const [a, b] = [before.counters[name], after.counters[name]];
      statements[name] = (b.statements - a.statements) / units;
      transactions[name] = (b.transactions - a.transactions) / units;
      const operations = {};
      for (const [operation, count] of Object.entries(b.operations)) {
        const done = (count - (a.operations[operation] ?? 0)) / units;
        if (done > 0) operations[operation] = done;
      }
      const total = Object.values(operations).reduce((sum, n) => sum + n, 0);
      requests[name] = { total, operations };
    }
    const sum = (values) => values.reduce((s, n) => s + n, 0);
    statements.total = sum(Object.values(statements));
    transactions.total = sum(Object.values(transactions));
    const requestTotal = sum(Object.values(requests).map((r) => r.total));
    const machineMs = after.machine.total - before.machine.total;
    const machineBusyMs = after.machine.busy - before.machine.busy;
    return {
      units,
      machine_idle_pct: machineMs > 0 ? (1 - machineBusyMs / machineMs) * 100 : NaN,
      // Server-wide: anything else using the same Redis meanwhile counts too (an upper bound).
      redis_commands: (after.redisCommands - before.redisCommands) / units,
      // The Postgres backends serving each database when the stretch ended (the meter's own not counted).
      connections: Object.fromEntries(Object.keys(clients).map((name) => [name, after.backends[name].size])),
      cpu_ms: cpu,
      statements,
      transactions,
      http_requests: { ...requests, total: requestTotal },
    };
  }

  async function close() {
    await Promise.all(Object.values(clients).map((client) => client.end().catch(() => undefined)));
    redis.disconnect();
  }

  return { snapshot, per, close };
}

/**
 * The cost of each phase as tables: CPU per unit by process, and per service the statements, transactions and
 * HTTP requests (with the operations that make up most of them). `phases` maps a phase's title to
 * {@link openCostMeter}'s `per` result; `unit` names a unit of work ("run").
 */
export function printCost(phases, unit) {
  const entries = Object.entries(phases).filter(([, cost]) => cost);
  if (entries.length === 0) return;
  const titles = entries.map(([title]) => title);
  const processNames = Object.keys(entries[0][1].cpu_ms);
  console.log(`\nCPU per ${unit} (ms), every process of the stack:`);
  const align = `l${'r'.repeat(titles.length)}`;
  printTable(
    ['process', ...titles],
    align,
    processNames.map((name) => [name, ...entries.map(([, cost]) => f(cost.cpu_ms[name], 2))]),
  );
  const services = Object.keys(entries[0][1].statements).filter((name) => name !== 'total');
  console.log(
    `\nPer ${unit}, as the services counted them (statements and transactions to PostgreSQL, HTTP requests answered):`,
  );
  const rows = [];
  for (const name of [...services, 'total']) {
    for (const [what, key] of [
      ['statements', 'statements'],
      ['transactions', 'transactions'],
    ])
      rows.push([`${name}: ${what}`, ...entries.map(([, cost]) => f(cost[key][name], 1))]);
    rows.push([
      `${name}: HTTP requests`,
      ...entries.map(([, cost]) =>
        f(name === 'total' ? cost.http_requests.total : cost.http_requests[name].total, 1),
      ),
    ]);
  }
  printTable(['service', ...titles], align, rows);
  const [lastTitle, last] = entries[entries.length - 1];
  console.log(`\nHTTP requests per ${unit} by operation (${lastTitle}):`);
  const operations = [];
  for (const name of services)
    for (const [operation, count] of Object.entries(last.http_requests[name].operations))
      operations.push([`${name} ${operation}`, count]);
  operations.sort((a, b) => b[1] - a[1]);
  printTable(
    ['operation', `per ${unit}`],
    'lr',
    operations.map(([op, n]) => [op, f(n, 2)]),
  );
}
