#!/usr/bin/env node
// Signed deliveries per second through the built worker, against two baselines measured in the same run.
// One file because its three measurements share one set-up (worker, receiver, database, queue) and run in
// alternating rounds; the receiver, the seeded rows and the report are modules in workflow-delivery/.
//
//   pnpm run build && node bench/workflow-delivery.mjs [--deliveries 20000] [--concurrency 200] [--rounds 2]
//                                                     [--http] [--timeout 300] [--cpu-prof DIR] [--json]
//
// Starts the built worker (`apps/workflow-api/dist/worker-main.js`) over a fresh, migrated workflow database and the
// machine's Redis under a queue prefix of its own, at its production defaults except that prefix,
// LOG_LEVEL=warn, WORKFLOW_ENCRYPTION_KEYS, WORKFLOW_DELIVERY_ALLOW_LOOPBACK=true, WORKFLOW_DELIVERY_CA_FILE
// (the receiver's self-signed certificate) and WORKFLOW_DELIVERY_CONCURRENCY=`--concurrency`. No hub is started:
// the worker only calls it for reconcile jobs, and none are created. A receiver runs in a thread of this process
// (HTTPS with a certificate made by `openssl`, or plain HTTP with `--http`): it verifies every request as a
// partner does, with `Webhook` of the built SDK (`@svc/sdk`), counts unique delivery ids and answers 204. Then, with the
// same `--deliveries` items and the same concurrency, (a) once, then (b) and (c) alternating for `--rounds`:
//   (a) raw BullMQ: a Worker in this process whose processor does nothing, jobs enqueued in chunks with the
//       service's job options — enqueue → completed;
//   (b) raw signed POST loop: this process signs (`deliveryHeaders`) and POSTs the bodies to the same receiver,
//       `--concurrency` requests in flight over keep-alive connections, no database — request → 204;
//   (c) deliveries: one subscription and `--deliveries` pending delivery rows inserted into the database, their
//       jobs enqueued as the service does (job id = delivery id, removeOnComplete/removeOnFail) — from the
//       first enqueue until the receiver has seen every id; afterwards the database must hold every row
//       `succeeded` with exactly one attempt, the receiver must have seen no duplicate and no bad signature,
//       and the queue must be empty.
// The worker's sweeper runs at its defaults throughout; what it re-enqueued is read from the worker's own
// counters (`/metrics` on its probe port) before and after (c).
// Targets: (c) ≥ 1 000 deliveries/s and ≥ 0.35× (b) with nothing lost or duplicated, and no delivery
// re-enqueued by the sweeper. A missed target is reported, not failed: the
// exit code is non-zero only when a delivery is lost, duplicated or refused, a request errs, the worker exits
// or set-up fails. The worker, the receiver, the database, the queue keys and the certificate are removed at
// the end, also on failure or Ctrl-C. Only 127.0.0.1 is contacted.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { assertBuilt, benchCli, load, requireFrom, run, testing } from './harness/cli.mjs';
import { backendCpu, databaseStats, diffBackendCpu, redisCpuMs } from './harness/data-stores.mjs';
import { nodeSender } from './harness/load.mjs';
import { machineBusy, ownCpuMs, processCpuMs } from './harness/proc.mjs';
import { bullmq, enqueueInChunks, noopQueue, redisConnection } from './harness/queues.mjs';
import { failureLog, printResult } from './harness/report.mjs';
import { readCounters } from './harness/requests.mjs';
import {
  cleanupStack,
  cpuProfileArgs,
  idle,
  redisUrl,
  reportCpuProfiles,
  selfSignedCertificate,
  sleep,
  tempDir,
} from './harness/stack.mjs';
import { now, startReceiver } from './workflow-delivery/receiver.mjs';
import { deliveryStatuses, eventBody, seedDeliveries } from './workflow-delivery/rows.mjs';
import { buildResult, combineDeliveries, combineRaw, printReport } from './workflow-delivery/report.mjs';

const NAME = 'workflow-delivery';
/** Jobs per `addBulk` call when enqueuing. */
const ENQUEUE_CHUNK = 1000;
/** The worker's queues under its prefix (delivery and reconcile), obliterated at the end. */
const WORKER_QUEUES = ['workflow-delivery', 'workflow-reconcile'];
const DELIVERY_QUEUE = 'workflow-delivery';
/** After the last id arrived: how long the rows may take to show `succeeded`, and the wait for late duplicates. */
const SETTLE_TIMEOUT_MS = 30_000;
const LATE_DUPLICATE_WAIT_MS = 1_000;

// ---------------------------------------------------------------------------------------------------------------

async function runBench() {
  const options = benchCli(NAME, ({ flag, int, text }) => ({
    deliveries: int('20000', 1, 1_000_000),
    concurrency: int('200', 1, 1000),
    rounds: int('2', 1, 20),
    http: flag(),
    timeout: int('300', 1, 3600),
    'cpu-prof': text(),
    json: flag(),
  }));

  const { deliveries: count, concurrency, rounds } = options;
  const timeoutMs = options.timeout * 1000;
  const secure = !options.http;
  const profileDir = options['cpu-prof'] ? path.resolve(options['cpu-prof']) : undefined;

  assertBuilt(['apps/workflow-api/dist/worker-main.js']);
  const harness = testing();
  const { latencyStats: stats } = harness;
  const { deliveryHeaders, generateSigningSecret } = load('packages/contracts/dist/index.js');
  const { createSecretBox, parseSecretBoxKeys, newId } = load('packages/service-kit/dist/index.js');
  const { Queue } = bullmq();
  const pg = requireFrom('apps/workflow-api', 'pg');

  const connection = redisConnection();
  const teardown = cleanupStack(NAME, 'stopping the worker, removing the database and queue keys');
  const interrupted = teardown.interrupted;
  const enqueueOptions = { chunk: ENQUEUE_CHUNK, now, interrupted };
  let worker;

  let db;
  let receiver;
  try {
    // The receiver's certificate: self-signed for 127.0.0.1, trusted by the worker through its CA file.
    const tls = secure ? selfSignedCertificate(tempDir(teardown, 'svc-delivery-bench-')) : undefined;

    const secret = generateSigningSecret();
    receiver = await startReceiver({ secret, tls: tls && { key: tls.key, cert: tls.cert } });
    teardown.push(() => receiver.close());
    const receiverUrl = `${secure ? 'https' : 'http'}://127.0.0.1:${receiver.port}/hooks/svc`;

    db = await harness.createWorkflowDatabase('svc_workflow_bench');
    teardown.push(() => db.drop());
    // The bench's own connection: seeding, checks and statistics (closed before the database is dropped).
    const client = new pg.Client({ connectionString: db.url, application_name: 'delivery-bench' });
    client.on('error', () => undefined);
    await client.connect();
    teardown.push(() => client.end());
    // The worker, at production defaults except what deliveries to a local receiver need.
    const encryptionKeys = `bench:${randomBytes(32).toString('base64')}`;
    const queuePrefix = harness.uniqueQueuePrefix('benchdlv');
    teardown.push(() => harness.obliterateQueues(redisUrl, queuePrefix, WORKER_QUEUES));
    const wf = await harness.workflowEnv({
      databaseUrl: db.url,
      redisUrl,
      queuePrefix,
      // Not contacted: the hub is only called for reconcile jobs, and this bench creates none.
      hubUrl: 'http://127.0.0.1:9',
      serviceToken: randomBytes(30).toString('base64url'),
      env: {
        WORKFLOW_ENCRYPTION_KEYS: encryptionKeys,
        WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
        WORKFLOW_DELIVERY_CONCURRENCY: String(concurrency),
        ...(secure ? { WORKFLOW_DELIVERY_CA_FILE: tls.caFile } : {}),
        NODE_ENV: 'production',
      },
    });
    const workerOptions = teardown.logged('workflow worker', {
      times: false,
      nodeArgs: cpuProfileArgs(profileDir),
    });
    worker = teardown.track(await harness.startWorkflowWorker(wf, workerOptions), workerOptions, 15_000);

    const loadBefore = os.loadavg()[0];
    const noop = await measureNoop();
    if (interrupted.aborted) return;
    // (b) and (c) in alternating rounds, so load from elsewhere on the machine weighs on both alike.
    const perRound = [];
    for (let round = 1; round <= rounds; round += 1) {
      const load = { before: os.loadavg()[0] };
      const raw = await measureRawPosts(secret, receiverUrl, tls?.cert);
      if (interrupted.aborted) return;
      const delivered = await measureDeliveries(
        client,
        secret,
        encryptionKeys,
        queuePrefix,
        receiverUrl,
        wf.workerUrl,
      );
      if (interrupted.aborted) return;
      load.after = os.loadavg()[0];
      perRound.push({ round, load_average_1m: load, raw, delivered });
      if (!worker.running()) break;
    }
    const loadAfter = os.loadavg()[0];

    const workerExited = !worker.running();
    const raw = combineRaw(perRound.map((r) => r.raw));
    const delivered = combineDeliveries(perRound.map((r) => r.delivered));
    const settings = { count, rounds, concurrency, secure };
    const measured = { noop, raw, delivered, workerExited, perRound };
    const result = buildResult(settings, { before: loadBefore, after: loadAfter }, measured);
    result.worker_logs = teardown.written(worker);
    printResult(result, options.json, printReport);
    if (result.problems.length > 0) {
      console.error(`workflow-delivery: ${result.problems.length} problem(s):`);
      for (const problem of result.problems) console.error(`  ${problem}`);
      teardown.printOutputs({ exited: false });
      process.exitCode = 1;
    }
    if (profileDir) await reportCpuProfiles(NAME, worker, profileDir, 'worker CPU profile(s)');
  } catch (error) {
    if (interrupted.aborted) return;
    teardown.printOutputs({ exited: false });
    console.error(`workflow-delivery: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
  } finally {
    await teardown.tearDown();
  }

  // -------------------------------------------------------------------------------------------------------------
  // The three measurements.

  /** (a) BullMQ alone: a no-op Worker with the same concurrency in this process, the service's job options. */
  async function measureNoop() {
    const name = 'bench-noop';
    const {
      queue,
      worker: noopWorker,
      close,
    } = await noopQueue(name, {
      prefix: `benchnoop${randomBytes(4).toString('hex')}`,
      concurrency,
    });
    const done = new Map();
    let finish;
    const allDone = new Promise((resolve) => (finish = resolve));
    const failures = failureLog();
    noopWorker.on('completed', (job) => {
      if (!done.has(job.id)) done.set(job.id, now());
      if (done.size === count) finish();
    });
    noopWorker.on('failed', (job, error) => failures.add(`no-op job failed: ${error?.message ?? error}`));
    noopWorker.on('error', (error) => failures.add(`no-op worker error: ${error?.message ?? error}`));
    try {
      const ids = Array.from({ length: count }, (_, i) => `noop-${i}`);
      const cpu0 = ownCpuMs();
      const busy = machineBusy();
      const { start, enqueuedAt, enqueueMs } = await enqueueInChunks(queue, 'noop', ids, {
        data: (id) => ({ n: id }),
        ...enqueueOptions,
      });
      const timedOut = await Promise.race([allDone.then(() => false), idle(timeoutMs).then(() => true)]);
      if (timedOut) failures.add(`not all no-op jobs completed within ${timeoutMs / 1000} s`);
      let end = start;
      for (const at of done.values()) if (at > end) end = at;
      const latencies = [];
      for (const [id, at] of done) latencies.push(at - enqueuedAt.get(id));
      return {
        completed: done.size,
        wall_s: (end - start) / 1000,
        per_second: done.size / ((end - start) / 1000),
        enqueue_s: enqueueMs / 1000,
        latency: stats(latencies),
        cpu: { bench_ms: ownCpuMs() - cpu0, ...busy() },
        failures,
      };
    } finally {
      await close();
    }
  }

  /** (b) Sign and POST `count` bodies from this process, `concurrency` in flight, keep-alive, no database. */
  async function measureRawPosts(secret, url, ca) {
    await receiver.reset(count);
    const agent = new (secure ? https : http).Agent({
      keepAlive: true,
      maxSockets: concurrency,
      scheduling: 'lifo',
    });
    const ids = Array.from({ length: count }, () => newId('msg'));
    const bodies = ids.map(() => eventBody());
    const timestamp = () => Math.floor(Date.now() / 1000);
    const send = nodeSender(url, {
      agent,
      ca,
      status: 204,
      request: (i) => ({
        method: 'POST',
        headers: {
          ...deliveryHeaders({ secret, deliveryId: ids[i], timestamp: timestamp(), body: bodies[i] }),
          'user-agent': 'svc-webhooks/1',
        },
        body: bodies[i],
      }),
    });
    const cpu0 = ownCpuMs();
    const busy = machineBusy();
    const loop = await harness.closedLoop(send, { concurrency, limit: { count }, record: true });
    const cpu = { bench_ms: ownCpuMs() - cpu0, ...busy() };
    agent.destroy();
    const failures = failureLog();
    for (const [label, n] of loop.errors) for (let i = 0; i < n; i += 1) failures.add(`raw POST: ${label}`);
    const seen = await receiver.report();
    if (seen.ids.length !== count) failures.add(`receiver saw ${seen.ids.length} of ${count} raw POSTs`);
    const { latencies, elapsedMs } = loop;
    return {
      completed: latencies.length,
      unique_received: seen.ids.length,
      connections: seen.connections,
      duplicates: seen.duplicates,
      rejected: seen.rejected,
      wall_s: elapsedMs / 1000,
      per_second: latencies.length / (elapsedMs / 1000),
      latency: stats(latencies),
      samples: latencies,
      cpu,
      failures,
    };
  }

  /** (c) Seed one subscription and `count` pending deliveries, enqueue their jobs, wait for the receiver. */
  async function measureDeliveries(client, secret, encryptionKeys, queuePrefix, url, workerUrl) {
    const failures = failureLog();
    // Statements of this client are counted, so the database's transaction count can leave them out.
    const query = client.query.bind(client);
    let ownStatements = 0;
    client.query = (...args) => {
      ownStatements += 1;
      return query(...args);
    };
    try {
      // Each round starts from empty tables, so its checks count its own rows only.
      await client.query('TRUNCATE delivery_attempts, deliveries');
      const sealer = createSecretBox(parseSecretBoxKeys(encryptionKeys));
      const { subscriptionId, ids } = await seedDeliveries(client, { count, url, secret, sealer, newId });

      await receiver.reset(count);
      const queue = new Queue(DELIVERY_QUEUE, { connection, prefix: queuePrefix });
      try {
        await queue.waitUntilReady();
        // This client's seeding statistics are flushed now rather than during the measurement.
        await client.query('SELECT pg_stat_force_next_flush()');
        const dbStats0 = await databaseStats(client, (row) => Number(row.tup_inserted) >= count + 1);
        const own0 = ownStatements;
        const backends0 = await backendCpu(client);
        const redis = await queue.getBackend().client;
        const redis0 = await redisCpuMs(redis);
        const workerCpu0 = processCpuMs(worker.child.pid);
        const cpu0 = ownCpuMs();
        const busy = machineBusy();
        const sweeper0 = await sweeperCounters(workerUrl);
        const completed = receiver.completed();
        const { start, enqueuedAt, enqueueMs } = await enqueueInChunks(queue, 'deliver', ids, {
          data: (deliveryId) => ({ deliveryId, trigger: 'scheduled' }),
          ...enqueueOptions,
        });
        const outcome = await Promise.race([
          completed.then((at) => ({ at })),
          idle(timeoutMs).then(() => ({ timedOut: true })),
          worker.exited.then(() => ({ exited: true })),
        ]);
        const receivedAll = outcome.at;
        if (outcome.timedOut) failures.add(`not every delivery arrived within ${timeoutMs / 1000} s`);
        if (outcome.exited) failures.add('the worker exited during the measurement');
        // CPU is read when the last delivery arrived; the rows' final update follows within milliseconds.
        const cpu = {
          worker_ms: (processCpuMs(worker.child.pid) ?? NaN) - (workerCpu0 ?? NaN),
          postgres_ms: diffBackendCpu(backends0, await backendCpu(client)),
          redis_ms: (await redisCpuMs(redis)) - redis0,
          bench_ms: ownCpuMs() - cpu0,
          ...busy(),
        };

        // Every row succeeded with one attempt (the row update follows the receiver's answer).
        const settleDeadline = now() + SETTLE_TIMEOUT_MS;
        let statuses = await deliveryStatuses(client);
        while ((statuses.succeeded ?? 0) < count && (statuses.pending ?? 0) > 0 && now() < settleDeadline) {
          if (outcome.exited || interrupted.aborted) break;
          await sleep(100);
          statuses = await deliveryStatuses(client);
        }
        const settledAt = now();
        await sleep(LATE_DUPLICATE_WAIT_MS);
        statuses = await deliveryStatuses(client);
        const sweeper1 = await sweeperCounters(workerUrl);
        const sweeper = {
          requeued: sweeper1.requeued - sweeper0.requeued,
          checked_held: sweeper1.held - sweeper0.held,
          checked_missing: sweeper1.missing - sweeper0.missing,
        };
        const seen = await receiver.report();
        const check = (
          await client.query(
            `SELECT
               (SELECT count(*) FROM deliveries WHERE status = 'succeeded' AND attempts = 1)::int AS one_attempt,
               (SELECT count(*) FROM delivery_attempts)::int AS attempt_rows,
               (SELECT count(DISTINCT delivery_id) FROM delivery_attempts)::int AS attempted,
               (SELECT count(*) FROM delivery_attempts WHERE status_code = 204)::int AS answered_204,
               (SELECT max(latency_ms) FROM delivery_attempts)::int AS max_attempt_ms,
               (SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY latency_ms) FROM delivery_attempts)
                 AS p50_attempt_ms,
               (SELECT percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) FROM delivery_attempts)
                 AS p99_attempt_ms,
               (SELECT is_active FROM delivery_subscriptions WHERE id = $1) AS subscription_active`,
            [subscriptionId],
          )
        ).rows[0];
        const jobCounts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized');
        // Other backends flush their statistics within about 10 s of going idle: wait for the attempt rows.
        const dbStats1 = await databaseStats(
          client,
          (row) =>
            Number(row.tup_inserted) - Number(dbStats0.tup_inserted) >= check.attempt_rows &&
            Number(row.tup_updated) - Number(dbStats0.tup_updated) >= check.attempt_rows,
        );
        const ownDuring = ownStatements - own0;

        const expected = new Set(ids);
        const stray = seen.ids.filter((id) => !expected.has(id)).length;
        const latencies = [];
        for (let i = 0; i < seen.ids.length; i += 1) {
          const sent = enqueuedAt.get(seen.ids[i]);
          if (sent !== undefined) latencies.push(seen.times[i] - sent);
        }
        const arrivals = Float64Array.from(seen.times).sort();
        const end = receivedAll ?? (arrivals.length ? arrivals[arrivals.length - 1] : start);
        const wallS = (end - start) / 1000;
        const unique = seen.ids.length - stray;
        // The steady part: between the 10th and the 90th percentile of arrivals.
        const lo = arrivals[Math.floor(arrivals.length * 0.1)];
        const hi = arrivals[Math.max(0, Math.ceil(arrivals.length * 0.9) - 1)];
        const steady =
          arrivals.length >= 10 && hi > lo
            ? (Math.ceil(arrivals.length * 0.9) - Math.floor(arrivals.length * 0.1) - 1) / ((hi - lo) / 1000)
            : NaN;
        const lost = count - unique;
        const dbDelta = {
          transactions: Number(dbStats1.xact_commit) - Number(dbStats0.xact_commit) - ownDuring,
          rows_inserted: Number(dbStats1.tup_inserted) - Number(dbStats0.tup_inserted),
          rows_updated: Number(dbStats1.tup_updated) - Number(dbStats0.tup_updated),
          rows_fetched: Number(dbStats1.tup_fetched) - Number(dbStats0.tup_fetched),
        };
        if (lost > 0) failures.add(`${lost} of ${count} deliveries never reached the receiver`);
        if (seen.duplicates > 0) failures.add(`the receiver saw ${seen.duplicates} duplicate delivery(ies)`);
        if (seen.rejected > 0)
          failures.add(
            `the receiver refused ${seen.rejected} request(s): ${JSON.stringify(seen.rejectCodes)}`,
          );
        if (stray > 0) failures.add(`the receiver saw ${stray} delivery id(s) that were not seeded`);
        if ((statuses.succeeded ?? 0) !== count)
          failures.add(
            `rows by status after the run: ${JSON.stringify(statuses)} (expected ${count} succeeded)`,
          );
        if (check.one_attempt !== count)
          failures.add(`${count - check.one_attempt} row(s) not succeeded with exactly one attempt`);
        if (check.attempt_rows !== count || check.attempted !== count)
          failures.add(
            `${check.attempt_rows} attempt row(s) for ${check.attempted} delivery(ies), expected ${count}`,
          );
        if (check.answered_204 !== check.attempt_rows)
          failures.add(`${check.attempt_rows - check.answered_204} attempt(s) not answered 204`);
        const leftInQueue = Object.values(jobCounts).reduce((a, b) => a + b, 0);
        if (leftInQueue > 0) failures.add(`jobs left in the delivery queue: ${JSON.stringify(jobCounts)}`);
        return {
          seeded: count,
          received_unique: unique,
          lost,
          duplicates: seen.duplicates,
          rejected: seen.rejected,
          requests: seen.requests,
          connections: seen.connections,
          wall_s: wallS,
          per_second: unique / wallS,
          steady_per_second: steady,
          enqueue_s: enqueueMs / 1000,
          rows_settled_s: (settledAt - start) / 1000,
          latency: stats(latencies),
          samples: latencies,
          attempt_latency_ms: {
            p50: Number(check.p50_attempt_ms),
            p99: Number(check.p99_attempt_ms),
            max: check.max_attempt_ms,
          },
          rows: statuses,
          one_attempt_each: check.one_attempt,
          attempt_rows: check.attempt_rows,
          // From the worker's own counters (its /metrics), taken before the first enqueue and after the end.
          sweeper,
          subscription_active: check.subscription_active,
          queue_left: jobCounts,
          cpu,
          database: {
            ...dbDelta,
            transactions_per_delivery: dbDelta.transactions / count,
          },
          failures,
        };
      } finally {
        await queue.close();
      }
    } finally {
      client.query = query;
    }
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers that need the set-up above.

  /**
   * The worker's sweeper counters from its `/metrics`: deliveries re-enqueued, and overdue deliveries it asked
   * the queue about, by answer (held, missing).
   */
  async function sweeperCounters(workerUrl) {
    return readCounters(
      `${workerUrl}/metrics`,
      {
        requeued: ['svc_workflow_sweeper_requeued_total', { kind: 'delivery' }],
        held: ['svc_workflow_sweeper_deliveries_checked_total', { queue: 'held' }],
        missing: ['svc_workflow_sweeper_deliveries_checked_total', { queue: 'missing' }],
      },
      "the worker's",
    );
  }
}

await run(runBench);
