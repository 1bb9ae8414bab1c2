#!/usr/bin/env node
// Signed deliveries per second through the built worker, against two baselines measured in the same run.
//
//   pnpm run build && node bench/workflow-delivery.mjs [--deliveries 20000] [--concurrency 200] [--rounds 2]
//                                                     [--http] [--timeout 300] [--cpu-prof DIR] [--json]
//
// Starts the built worker (`apps/workflow-api/dist/worker-main.js`) over a fresh, migrated workflow database and the
// machine's Redis under a queue prefix of its own, at its production defaults except that prefix,
// LOG_LEVEL=warn, WORKFLOW_ENCRYPTION_KEYS, WORKFLOW_DELIVERY_ALLOW_LOOPBACK=true, WORKFLOW_DELIVERY_CA_FILE
// (the receiver's self-signed certificate) and WORKFLOW_DELIVERY_CONCURRENCY=`--concurrency`. No hub is started:
// the worker only calls it for reconcile jobs, and none are created. A receiver runs in a thread of this process
// (HTTPS with a certificate made by `openssl`, or plain HTTP with `--http`): it verifies every request with
// `verifyDelivery` of the built contracts package, counts unique delivery ids and answers 204. Then, with the
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
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker as Thread, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { benchArgs, benchCli, cleanupStack, lineCounter, machine, printLines, root } from './support.mjs';

const contractsDist = path.join(root, 'packages', 'contracts', 'dist', 'index.js');
const require = createRequire(import.meta.url);

const TARGET_PER_SECOND = 1000;
/** (c) against (b), the raw signed POST loop of the same run. */
const TARGET_RATIO_TO_RAW = 0.35;
/** Jobs per `addBulk` call when enqueuing; delivery rows per INSERT when seeding. */
const ENQUEUE_CHUNK = 1000;
const INSERT_CHUNK = 1000;
/** The worker's queues under its prefix (delivery and reconcile), obliterated at the end. */
const WORKER_QUEUES = ['workflow-delivery', 'workflow-reconcile'];
const DELIVERY_QUEUE = 'workflow-delivery';
const EVENT = 'invocation.completed';
/** After the last id arrived: how long the rows may take to show `succeeded`, and the wait for late duplicates. */
const SETTLE_TIMEOUT_MS = 30_000;
const LATE_DUPLICATE_WAIT_MS = 1_000;

// ---------------------------------------------------------------------------------------------------------------
// The receiver: runs in a worker thread, so its event loop is not shared with the load generators.

function receiverThread() {
  const { verifyDelivery } = require(contractsDist);
  const { secret, tls } = workerData;
  const now = () => performance.timeOrigin + performance.now();
  let seen = new Map();
  let expect = Infinity;
  let requests = 0;
  let duplicates = 0;
  let rejected = 0;
  let rejectCodes = {};
  let connections = 0;
  const handle = (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const at = now();
      requests += 1;
      let deliveryId;
      try {
        deliveryId = verifyDelivery({ secret, headers: req.headers, body: Buffer.concat(chunks) }).deliveryId;
      } catch (error) {
        rejected += 1;
        const code = error?.code ?? 'error';
        rejectCodes[code] = (rejectCodes[code] ?? 0) + 1;
        res.writeHead(400, { 'content-type': 'text/plain' }).end(code);
        return;
      }
      if (seen.has(deliveryId)) {
        duplicates += 1;
      } else {
        seen.set(deliveryId, at);
        if (seen.size === expect) parentPort.postMessage({ type: 'complete', at });
      }
      res.writeHead(204).end();
    });
  };
  const serverOptions = { keepAliveTimeout: 60_000, requestTimeout: 60_000 };
  const server = tls
    ? https.createServer({ ...serverOptions, key: tls.key, cert: tls.cert }, handle)
    : http.createServer(serverOptions, handle);
  // Connections opened (after the TLS handshake for HTTPS): keep-alive reuse shows as few of them.
  server.on(tls ? 'secureConnection' : 'connection', () => {
    connections += 1;
  });
  server.listen(0, '127.0.0.1', () =>
    parentPort.postMessage({ type: 'listening', port: server.address().port }),
  );
  parentPort.on('message', (message) => {
    if (message.type === 'reset') {
      seen = new Map();
      expect = message.expect;
      requests = 0;
      duplicates = 0;
      rejected = 0;
      rejectCodes = {};
      connections = 0;
      parentPort.postMessage({ type: 'reset', seq: message.seq });
    } else if (message.type === 'report') {
      const ids = [...seen.keys()];
      const times = Float64Array.from(seen.values());
      parentPort.postMessage(
        {
          type: 'report',
          seq: message.seq,
          ids,
          times,
          requests,
          duplicates,
          rejected,
          rejectCodes,
          connections,
        },
        [times.buffer],
      );
    } else if (message.type === 'close') {
      server.closeAllConnections?.();
      server.close(() => parentPort.close());
    }
  });
}

// ---------------------------------------------------------------------------------------------------------------

async function runBench() {
  const { values: args } = benchArgs('workflow-delivery', {
    options: {
      deliveries: { type: 'string', default: '20000' },
      concurrency: { type: 'string', default: '200' },
      rounds: { type: 'string', default: '2' },
      http: { type: 'boolean', default: false },
      timeout: { type: 'string', default: '300' },
      'cpu-prof': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const cli = benchCli('workflow-delivery');
  const count = cli.intBetween(args.deliveries, 'deliveries', 1, 1_000_000);
  const concurrency = cli.intBetween(args.concurrency, 'concurrency', 1, 1000);
  const timeoutMs = cli.intBetween(args.timeout, 'timeout', 1, 3600) * 1000;
  const rounds = cli.intBetween(args.rounds, 'rounds', 1, 20);
  const secure = !args.http;
  const profileDir = args['cpu-prof'] ? path.resolve(args['cpu-prof']) : undefined;

  cli.assertBuilt(['apps/workflow-api/dist/worker-main.js']);
  const harness = cli.load('packages/testing/dist/index.js');
  const { latencyStats: stats } = harness;
  const { deliveryHeaders, generateSigningSecret } = cli.load('packages/contracts/dist/index.js');
  const { createSecretBox, parseSecretBoxKeys, newId } = cli.load('packages/service-kit/dist/index.js');
  const { Queue, Worker } = cli.requireFrom('apps/workflow-api', 'bullmq');
  const pg = cli.requireFrom('apps/workflow-api', 'pg');

  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const connection = harness.redisConnectionOptions(redisUrl);
  const teardown = cleanupStack(
    'workflow-delivery',
    'stopping the worker, removing the database and queue keys',
  );
  const interrupted = teardown.interrupted;
  const workerLines = lineCounter({ times: false });
  let worker;

  const clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  /** CPU milliseconds (user + system) a process has used so far, from /proc; undefined when it is gone. */
  const processCpuMs = (pid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
    } catch {
      return undefined;
    }
  };
  /** Busy and total CPU milliseconds of the whole machine so far (all CPUs), from /proc/stat. */
  const machineCpuMs = () => {
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
    const ticks = values.slice(0, 8).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    const idle = ticks[3] + ticks[4];
    return { busy: ((total - idle) * 1000) / clockTicks, total: (total * 1000) / clockTicks };
  };
  const ownCpuMs = () => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };

  let db;
  let receiver;
  try {
    // The receiver's certificate: self-signed for 127.0.0.1, trusted by the worker through its CA file.
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'svc-delivery-bench-'));
    teardown.push(() => rmSync(tmp, { recursive: true, force: true }));
    let tls;
    const caFile = path.join(tmp, 'receiver-cert.pem');
    if (secure) {
      const keyFile = path.join(tmp, 'receiver-key.pem');
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          keyFile,
          '-out',
          caFile,
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      );
      tls = { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(caFile, 'utf8') };
    }

    const secret = generateSigningSecret();
    receiver = await startReceiver({ secret, tls });
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
        ...(secure ? { WORKFLOW_DELIVERY_CA_FILE: caFile } : {}),
        NODE_ENV: 'production',
      },
    });
    worker = await harness.startWorkflowWorker(wf, {
      name: 'workflow worker',
      outputLimit: 16_000,
      onLine: (line) => workerLines.add(line),
      ...(profileDir ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}),
    });
    teardown.procs.push({ stop: () => worker.stop('SIGTERM', 15_000) });

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
    const result = buildResult({ loadBefore, loadAfter, noop, raw, delivered, workerExited, perRound });
    result.worker_logs = workerLines.summary();
    if (args.json) console.log(JSON.stringify(result, null, 2));
    else printTable(result);
    if (result.problems.length > 0) {
      console.error(`workflow-delivery: ${result.problems.length} problem(s):`);
      for (const problem of result.problems) console.error(`  ${problem}`);
      printLines(worker.name, workerLines.summary());
      process.exitCode = 1;
    }
    if (profileDir) {
      await worker.stop('SIGTERM', 15_000);
      const profiles = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'));
      console.error(`workflow-delivery: worker CPU profile(s) in ${profileDir}: ${profiles.join(', ')}`);
    }
  } catch (error) {
    if (interrupted.aborted) return;
    if (worker) printLines(worker.name, workerLines.summary());
    console.error(`workflow-delivery: ${error instanceof Error ? error.message : error}`);
    process.exitCode = 1;
  } finally {
    await teardown.tearDown();
  }

  // -------------------------------------------------------------------------------------------------------------
  // The three measurements.

  /** (a) BullMQ alone: a no-op Worker with the same concurrency in this process, the service's job options. */
  async function measureNoop() {
    const prefix = `benchnoop${randomBytes(4).toString('hex')}`;
    const name = 'bench-noop';
    const queue = new Queue(name, { connection, prefix });
    const done = new Map();
    let finish;
    const allDone = new Promise((resolve) => (finish = resolve));
    const failures = failureLog();
    const noopWorker = new Worker(name, async () => undefined, { connection, prefix, concurrency });
    noopWorker.on('completed', (job) => {
      if (!done.has(job.id)) done.set(job.id, now());
      if (done.size === count) finish();
    });
    noopWorker.on('failed', (job, error) => failures.add(`no-op job failed: ${error?.message ?? error}`));
    noopWorker.on('error', (error) => failures.add(`no-op worker error: ${error?.message ?? error}`));
    const closeAll = async () => {
      await Promise.allSettled([noopWorker.close(), queue.close()]);
      await harness.obliterateQueues(redisUrl, prefix, [name]);
    };
    try {
      await Promise.all([queue.waitUntilReady(), noopWorker.waitUntilReady()]);
      const ids = Array.from({ length: count }, (_, i) => `noop-${i}`);
      const cpu0 = ownCpuMs();
      const machine0 = machineCpuMs();
      const { start, enqueuedAt, enqueueMs } = await enqueue(queue, 'noop', ids, (id) => ({ n: id }));
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
        cpu: { bench_ms: ownCpuMs() - cpu0, ...machineShare(machine0) },
        failures,
      };
    } finally {
      await closeAll();
    }
  }

  /** (b) Sign and POST `count` bodies from this process, `concurrency` in flight, keep-alive, no database. */
  async function measureRawPosts(secret, url, ca) {
    await receiver.reset(count);
    const target = new URL(url);
    const transport = secure ? https : http;
    const agent = new transport.Agent({ keepAlive: true, maxSockets: concurrency, scheduling: 'lifo' });
    const failures = failureLog();
    const latencies = [];
    const ids = Array.from({ length: count }, () => newId('msg'));
    const bodies = ids.map(() => eventBody());
    let next = 0;
    const postOne = (deliveryId, body) =>
      new Promise((resolve, reject) => {
        const headers = deliveryHeaders({
          secret,
          deliveryId,
          timestamp: Math.floor(Date.now() / 1000),
          body,
        });
        const request = transport.request(
          {
            hostname: target.hostname,
            port: Number(target.port),
            path: target.pathname,
            method: 'POST',
            agent,
            ...(ca ? { ca } : {}),
            headers: {
              ...headers,
              'user-agent': 'svc-webhooks/1',
              'content-length': String(Buffer.byteLength(body, 'utf8')),
            },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode));
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    const cpu0 = ownCpuMs();
    const machine0 = machineCpuMs();
    const start = now();
    const loop = async () => {
      while (next < count && !interrupted.aborted) {
        const i = next;
        next += 1;
        const t0 = now();
        try {
          const status = await postOne(ids[i], bodies[i]);
          if (status !== 204) failures.add(`raw POST answered ${status}`);
          latencies.push(now() - t0);
        } catch (error) {
          failures.add(`raw POST: ${error?.code ?? error?.message ?? error}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, loop));
    const end = now();
    const cpu = { bench_ms: ownCpuMs() - cpu0, ...machineShare(machine0) };
    agent.destroy();
    const seen = await receiver.report();
    if (seen.ids.length !== count) failures.add(`receiver saw ${seen.ids.length} of ${count} raw POSTs`);
    return {
      completed: latencies.length,
      unique_received: seen.ids.length,
      connections: seen.connections,
      duplicates: seen.duplicates,
      rejected: seen.rejected,
      wall_s: (end - start) / 1000,
      per_second: latencies.length / ((end - start) / 1000),
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
      const workspaceId = newId('ws');
      const projectId = newId('prj');
      const subscriptionId = newId('dsub');
      const box = createSecretBox(parseSecretBoxKeys(encryptionKeys));
      await client.query(
        `INSERT INTO delivery_subscriptions (id, workspace_id, project_id, url, events, description, secret_sealed)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          subscriptionId,
          workspaceId,
          projectId,
          url,
          JSON.stringify([EVENT]),
          'delivery bench receiver',
          box.seal(secret, subscriptionId),
        ],
      );
      const ids = [];
      const seededAt = new Date();
      for (let at = 0; at < count; at += INSERT_CHUNK) {
        const rows = [];
        for (let i = at; i < Math.min(count, at + INSERT_CHUNK); i += 1) {
          const id = newId('msg');
          const invocationId = newId('inv');
          ids.push(id);
          rows.push([
            id,
            subscriptionId,
            workspaceId,
            projectId,
            invocationId,
            EVENT,
            eventBody({ workspaceId, projectId, invocationId }),
            'pending',
            seededAt,
            seededAt,
          ]);
        }
        const columns = [
          'id',
          'subscription_id',
          'workspace_id',
          'project_id',
          'invocation_id',
          'event',
          'body',
          'status',
          'next_attempt_at',
          'enqueued_at',
        ];
        const values = [];
        const tuples = rows.map((row) => {
          const marks = row.map((value) => {
            values.push(value);
            return `$${values.length}`;
          });
          return `(${marks.join(', ')})`;
        });
        await client.query(
          `INSERT INTO deliveries (${columns.join(', ')}) VALUES ${tuples.join(', ')}`,
          values,
        );
      }

      await receiver.reset(count);
      const queue = new Queue(DELIVERY_QUEUE, { connection, prefix: queuePrefix });
      try {
        await queue.waitUntilReady();
        // This client's seeding statistics are flushed now rather than during the measurement.
        await client.query('SELECT pg_stat_force_next_flush()');
        const dbStats0 = await databaseStats(client, (row) => Number(row.tup_inserted) >= count + 1);
        const own0 = ownStatements;
        const backends0 = await backendCpu(client);
        const redis0 = await redisCpuMs(queue);
        const workerCpu0 = processCpuMs(worker.child.pid);
        const cpu0 = ownCpuMs();
        const machine0 = machineCpuMs();
        const sweeper0 = await sweeperCounters(workerUrl);
        const completed = receiver.completed();
        const { start, enqueuedAt, enqueueMs } = await enqueue(queue, 'deliver', ids, (deliveryId) => ({
          deliveryId,
          trigger: 'scheduled',
        }));
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
          redis_ms: (await redisCpuMs(queue)) - redis0,
          bench_ms: ownCpuMs() - cpu0,
          ...machineShare(machine0),
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
  // Rounds together: rates are items over the summed wall time, latencies are percentiles of all samples.

  function mergedFailures(list) {
    const merged = failureLog();
    for (const m of list)
      for (const [label, times] of Object.entries(m.failures.toJSON()))
        for (let i = 0; i < times; i += 1) merged.add(label);
    return merged;
  }

  function sumOf(list, read) {
    return list.reduce((total, item) => total + read(item), 0);
  }

  function meanOf(list, read) {
    return sumOf(list, read) / list.length;
  }

  function combineRaw(list) {
    const samples = list.flatMap((m) => m.samples);
    const wall = sumOf(list, (m) => m.wall_s);
    return {
      completed: sumOf(list, (m) => m.completed),
      unique_received: sumOf(list, (m) => m.unique_received),
      connections: sumOf(list, (m) => m.connections),
      duplicates: sumOf(list, (m) => m.duplicates),
      rejected: sumOf(list, (m) => m.rejected),
      wall_s: wall,
      per_second: sumOf(list, (m) => m.completed) / wall,
      latency: stats(samples),
      cpu: {
        bench_ms: sumOf(list, (m) => m.cpu.bench_ms),
        machine_busy_pct: meanOf(list, (m) => m.cpu.machine_busy_pct),
      },
      failures: mergedFailures(list),
    };
  }

  function combineDeliveries(list) {
    const samples = list.flatMap((m) => m.samples);
    const wall = sumOf(list, (m) => m.wall_s);
    const unique = sumOf(list, (m) => m.received_unique);
    const rows = {};
    for (const m of list) for (const [k, n] of Object.entries(m.rows)) rows[k] = (rows[k] ?? 0) + n;
    const queueLeft = {};
    for (const m of list)
      for (const [k, n] of Object.entries(m.queue_left)) queueLeft[k] = (queueLeft[k] ?? 0) + n;
    const database = {
      transactions: sumOf(list, (m) => m.database.transactions),
      rows_inserted: sumOf(list, (m) => m.database.rows_inserted),
      rows_updated: sumOf(list, (m) => m.database.rows_updated),
      rows_fetched: sumOf(list, (m) => m.database.rows_fetched),
    };
    return {
      seeded: sumOf(list, (m) => m.seeded),
      received_unique: unique,
      lost: sumOf(list, (m) => m.lost),
      duplicates: sumOf(list, (m) => m.duplicates),
      rejected: sumOf(list, (m) => m.rejected),
      requests: sumOf(list, (m) => m.requests),
      connections: sumOf(list, (m) => m.connections),
      wall_s: wall,
      per_second: unique / wall,
      steady_per_second: meanOf(list, (m) => m.steady_per_second),
      enqueue_s: meanOf(list, (m) => m.enqueue_s),
      rows_settled_s: meanOf(list, (m) => m.rows_settled_s),
      latency: stats(samples),
      attempt_latency_ms: {
        p50: meanOf(list, (m) => m.attempt_latency_ms.p50),
        p99: Math.max(...list.map((m) => m.attempt_latency_ms.p99)),
        max: Math.max(...list.map((m) => m.attempt_latency_ms.max)),
      },
      rows,
      one_attempt_each: sumOf(list, (m) => m.one_attempt_each),
      attempt_rows: sumOf(list, (m) => m.attempt_rows),
      sweeper: {
        requeued: sumOf(list, (m) => m.sweeper.requeued),
        checked_held: sumOf(list, (m) => m.sweeper.checked_held),
        checked_missing: sumOf(list, (m) => m.sweeper.checked_missing),
      },
      subscription_active: list.every((m) => m.subscription_active),
      queue_left: queueLeft,
      cpu: {
        worker_ms: sumOf(list, (m) => m.cpu.worker_ms),
        postgres_ms: sumOf(list, (m) => m.cpu.postgres_ms),
        redis_ms: sumOf(list, (m) => m.cpu.redis_ms),
        bench_ms: sumOf(list, (m) => m.cpu.bench_ms),
        machine_busy_pct: meanOf(list, (m) => m.cpu.machine_busy_pct),
      },
      database: { ...database, transactions_per_delivery: database.transactions / unique },
      failures: mergedFailures(list),
    };
  }

  /** A measurement without its raw samples (for the JSON report). */
  function withoutSamples({ samples: _samples, ...rest }) {
    return rest;
  }

  // -------------------------------------------------------------------------------------------------------------
  // Report.

  function buildResult({ loadBefore, loadAfter, noop, raw, delivered, workerExited, perRound }) {
    const problems = [];
    for (const [label, log] of [
      ['(a) no-op', noop.failures],
      ['(b) raw POST', raw.failures],
      ['(c) deliveries', delivered.failures],
    ]) {
      for (const [failure, times] of Object.entries(log.toJSON()))
        problems.push(`${label}: ${failure}${times > 1 ? ` ×${times}` : ''}`);
    }
    if (workerExited) problems.push('the worker exited before the end');
    const nothingLost =
      delivered.lost === 0 && delivered.duplicates === 0 && delivered.failures.total === 0 && !workerExited;
    return {
      date: new Date().toISOString(),
      machine: machine(loadBefore, loadAfter),
      settings: {
        deliveries: count,
        rounds,
        concurrency,
        receiver: secure ? 'https (self-signed certificate), verifyDelivery on every request' : 'http',
        worker_env:
          'production defaults; WORKFLOW_QUEUE_PREFIX unique, LOG_LEVEL=warn, WORKFLOW_DELIVERY_ALLOW_LOOPBACK=true, ' +
          `WORKFLOW_DELIVERY_CONCURRENCY=${concurrency}${secure ? ', WORKFLOW_DELIVERY_CA_FILE' : ''}`,
      },
      noop: withoutSamples(noop),
      raw_post: withoutSamples(raw),
      deliveries: withoutSamples(delivered),
      rounds: perRound.map((r) => ({
        round: r.round,
        load_average_1m: r.load_average_1m,
        raw_post: withoutSamples(r.raw),
        deliveries: withoutSamples(r.delivered),
        deliveries_to_raw_post: r.delivered.per_second / r.raw.per_second,
      })),
      ratios: {
        deliveries_to_noop: delivered.per_second / noop.per_second,
        deliveries_to_raw_post: delivered.per_second / raw.per_second,
      },
      target: {
        per_second: TARGET_PER_SECOND,
        ratio_to_raw_post: TARGET_RATIO_TO_RAW,
        sweeper_requeued: 0,
        rate_met: nothingLost && delivered.per_second >= TARGET_PER_SECOND,
        ratio_met: nothingLost && delivered.per_second / raw.per_second >= TARGET_RATIO_TO_RAW,
        sweeper_met: delivered.sweeper.requeued === 0,
        met:
          nothingLost &&
          delivered.per_second >= TARGET_PER_SECOND &&
          delivered.per_second / raw.per_second >= TARGET_RATIO_TO_RAW &&
          delivered.sweeper.requeued === 0,
      },
      problems,
    };
  }

  function printTable(result) {
    const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');
    const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US').replace(/,/g, ' ') : '-');
    const { noop, raw_post: raw, deliveries: d } = result;
    const load = result.machine.load_average_1m;
    console.log(
      `workflow delivery — ${result.machine.cpus} CPUs (${result.machine.model}), node ${process.version}; ` +
        `${int(count)} items per measurement, (b) and (c) alternating in ${rounds} round(s), concurrency ` +
        `${concurrency}; ${secure ? 'HTTPS' : 'HTTP'} receiver ` +
        `in a thread of the bench process, every signature verified; worker at production defaults (own queue ` +
        `prefix, LOG_LEVEL=warn); load average ${f(load.before, 2)} → ${f(load.after, 2)}`,
    );
    console.log('');
    console.log('| measurement | done | wall s | per s | (c) ÷ this | p50 ms | p90 ms | p99 ms | max ms |');
    console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    const row = (name, done, m, ratio) =>
      console.log(
        `| ${name} | ${int(done)} | ${f(m.wall_s, 2)} | ${int(m.per_second)} | ${ratio} | ` +
          `${f(m.latency.p50_ms)} | ${f(m.latency.p90_ms)} | ${f(m.latency.p99_ms)} | ${f(m.latency.max_ms)} |`,
      );
    row(
      '(a) BullMQ no-op jobs: enqueue → completed',
      noop.completed,
      noop,
      `${f(result.ratios.deliveries_to_noop, 2)}×`,
    );
    row(
      '(b) raw signed POST loop: request → 204',
      raw.completed,
      raw,
      `${f(result.ratios.deliveries_to_raw_post, 2)}×`,
    );
    row('(c) signed deliveries: enqueue → received', d.received_unique, d, '1.00×');
    console.log('');
    console.log(
      '| round | load average 1 min | (b) raw POSTs/s | (c) deliveries/s | (c) ÷ (b) | (c) re-enqueued by the sweeper |',
    );
    console.log('|---:|---|---:|---:|---:|---:|');
    for (const r of result.rounds)
      console.log(
        `| ${r.round} | ${f(r.load_average_1m.before, 2)} → ${f(r.load_average_1m.after, 2)} | ` +
          `${int(r.raw_post.per_second)} | ${int(r.deliveries.per_second)} | ${f(r.deliveries_to_raw_post, 2)}× | ` +
          `${int(r.deliveries.sweeper.requeued)} |`,
      );
    console.log('');
    const perThousand = (ms) => `${f((ms / d.received_unique) * 1000, 0)} ms`;
    const oneCpu = (ms) => `${f((ms / (d.wall_s * 1000)) * 100, 0)} %`;
    console.log(
      `(c) per round (mean): steady rate (10th to 90th percentile of arrivals) ${int(d.steady_per_second)}/s; ` +
        `enqueue of ${int(count)} jobs took ${f(d.enqueue_s, 2)} s (a: ${f(noop.enqueue_s, 2)} s); every row ` +
        `succeeded ${f(d.rows_settled_s, 2)} s after the first enqueue; attempt latency recorded by the worker ` +
        `p50 ${f(d.attempt_latency_ms.p50, 0)} ms, p99 (highest round) ${f(d.attempt_latency_ms.p99, 0)} ms`,
    );
    console.log(
      `(c) sweeper (the worker's counters): ${int(d.sweeper.requeued)} deliveries re-enqueued; overdue ` +
        `deliveries it asked the queue about: ${int(d.sweeper.checked_held)} still held (left alone), ` +
        `${int(d.sweeper.checked_missing)} missing`,
    );
    console.log(
      `(c) checks: received ${int(d.received_unique)}/${int(d.seeded)} unique, ${d.duplicates} duplicate(s), ` +
        `${d.rejected} refused; rows ${JSON.stringify(d.rows)}; succeeded with one attempt ` +
        `${int(d.one_attempt_each)}/${int(d.seeded)}; attempt rows ${int(d.attempt_rows)}; jobs left ` +
        `${Object.values(d.queue_left).reduce((a, b) => a + b, 0)}; connections the receiver accepted ` +
        `${int(d.connections)} for ${int(d.requests)} requests (b: ${int(raw.connections)})`,
    );
    console.log(
      `(c) CPU per 1 000 deliveries (share of one CPU): worker ${perThousand(d.cpu.worker_ms)} ` +
        `(${oneCpu(d.cpu.worker_ms)}), Postgres backends ${perThousand(d.cpu.postgres_ms)} ` +
        `(${oneCpu(d.cpu.postgres_ms)}), Redis (whole server, shared) ${perThousand(d.cpu.redis_ms)} ` +
        `(${oneCpu(d.cpu.redis_ms)}), bench process (receiver + enqueue) ${perThousand(d.cpu.bench_ms)} ` +
        `(${oneCpu(d.cpu.bench_ms)}); machine busy ${f(d.cpu.machine_busy_pct, 0)} % of all CPUs ` +
        `(a: ${f(noop.cpu.machine_busy_pct, 0)} %, b: ${f(raw.cpu.machine_busy_pct, 0)} %)`,
    );
    console.log(
      `(c) database: ${f(d.database.transactions_per_delivery, 2)} transactions per delivery ` +
        `(${int(d.database.transactions)} committed), ${int(d.database.rows_inserted)} rows inserted, ` +
        `${int(d.database.rows_updated)} updated, ${int(d.database.rows_fetched)} fetched`,
    );
    console.log('');
    const verdict = (met) => (met ? 'met' : 'NOT met');
    console.log(
      `signed deliveries ${int(d.per_second)}/s with nothing lost or duplicated — target ≥ ${int(TARGET_PER_SECOND)}/s: ` +
        verdict(result.target.rate_met),
    );
    console.log(
      `deliveries ÷ raw signed POST loop: ${f(result.ratios.deliveries_to_raw_post, 2)}× — target ≥ ` +
        `${TARGET_RATIO_TO_RAW}×: ${verdict(result.target.ratio_met)}`,
    );
    console.log(
      `sweeper re-enqueues during the run: ${int(d.sweeper.requeued)} — target 0: ${verdict(result.target.sweeper_met)}`,
    );
  }

  // -------------------------------------------------------------------------------------------------------------
  // Helpers that need the set-up above.

  /** Enqueues one job per id in chunks (job id = the id, the service's options); times are per chunk. */
  async function enqueue(queue, name, ids, data) {
    const enqueuedAt = new Map();
    const start = now();
    for (let at = 0; at < ids.length && !interrupted.aborted; at += ENQUEUE_CHUNK) {
      const chunk = ids.slice(at, at + ENQUEUE_CHUNK);
      const t = now();
      for (const id of chunk) enqueuedAt.set(id, t);
      await queue.addBulk(
        chunk.map((id) => ({
          name,
          data: data(id),
          opts: { jobId: id, removeOnComplete: true, removeOnFail: true },
        })),
      );
    }
    return { start, enqueuedAt, enqueueMs: now() - start };
  }

  /**
   * The worker's sweeper counters from its `/metrics`: deliveries re-enqueued, and overdue deliveries it asked
   * the queue about, by answer (held, missing).
   */
  async function sweeperCounters(workerUrl) {
    const res = await fetch(`${workerUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new Error(`the worker's /metrics answered ${res.status}`);
    const samples = harness.parseMetrics(await res.text());
    const read = (name, labels) => {
      const value = harness.metricValue(samples, name, labels);
      if (value === undefined) throw new Error(`the worker's /metrics has no ${name}`);
      return value;
    };
    return {
      requeued: read('svc_workflow_sweeper_requeued_total', { kind: 'delivery' }),
      held: read('svc_workflow_sweeper_deliveries_checked_total', { queue: 'held' }),
      missing: read('svc_workflow_sweeper_deliveries_checked_total', { queue: 'missing' }),
    };
  }

  /** The machine's busy share since `machine0` (all CPUs together; 100 % = every CPU busy). */
  function machineShare(machine0) {
    const machine1 = machineCpuMs();
    const total = machine1.total - machine0.total;
    return { machine_busy_pct: total > 0 ? ((machine1.busy - machine0.busy) / total) * 100 : NaN };
  }

  /** CPU milliseconds of every Postgres backend serving this database, by pid. */
  async function backendCpu(client) {
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

  /** CPU the backends used between two readings (a backend that appeared in between counts from zero). */
  function diffBackendCpu(before, after) {
    let sum = 0;
    for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
    return sum;
  }

  /** Redis's own CPU so far (the whole server, shared with anything else using it). */
  async function redisCpuMs(queue) {
    const redis = await queue.getBackend().client;
    const info = await redis.info('cpu');
    const read = (key) => Number(new RegExp(`^${key}:([\\d.]+)`, 'm').exec(info)?.[1]);
    return (read('used_cpu_sys') + read('used_cpu_user')) * 1000;
  }

  /** This database's counters, read again until `ready(row)` holds or 15 s pass (statistics arrive late). */
  async function databaseStats(client, ready) {
    const deadline = now() + 15_000;
    for (;;) {
      await client.query('SELECT pg_stat_clear_snapshot()');
      const row = (
        await client.query(
          'SELECT xact_commit, tup_inserted, tup_updated, tup_fetched FROM pg_stat_database ' +
            'WHERE datname = current_database()',
        )
      ).rows[0];
      if (ready(row) || now() > deadline) return row;
      await sleep(250);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Generic helpers.

function now() {
  return performance.timeOrigin + performance.now();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A sleep that does not keep the process alive (for the time limit of a race). */
function idle(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** A realistic `invocation.completed` body, as the service writes it (`deliveryBody` in events.ts). */
function eventBody(ids = {}) {
  const id = (prefix) => `${prefix}_${randomBytes(13).toString('hex').slice(0, 26)}`;
  return JSON.stringify({
    type: EVENT,
    timestamp: new Date().toISOString(),
    data: {
      workspace_id: ids.workspaceId ?? id('ws'),
      project_id: ids.projectId ?? id('prj'),
      invocation_id: ids.invocationId ?? id('inv'),
      state: 'completed',
      attention: 'none',
      attention_reason: null,
      correlation_id: `order-${randomBytes(6).toString('hex')}`,
      artifact: {
        artifact_id: id('art'),
        schema_id: id('asch'),
        schema_name: 'weekly-report',
        schema_version: '1.0.0',
      },
    },
  });
}

/** Failures counted by label. */
function failureLog() {
  const counts = new Map();
  return {
    add(label) {
      counts.set(label, (counts.get(label) ?? 0) + 1);
    },
    get total() {
      return [...counts.values()].reduce((a, b) => a + b, 0);
    },
    toJSON() {
      return Object.fromEntries(counts);
    },
  };
}

/** Starts the receiver thread; resolves once it listens. */
async function startReceiver({ secret, tls }) {
  const thread = new Thread(new URL(import.meta.url), { workerData: { secret, tls } });
  let seq = 0;
  const pending = new Map();
  let onComplete;
  let failed;
  const listening = new Promise((resolve, reject) => {
    failed = reject;
    thread.on('message', (message) => {
      if (message.type === 'listening') resolve(message.port);
      else if (message.type === 'complete') onComplete?.(message.at);
      else pending.get(message.seq)?.(message);
    });
  });
  thread.on('error', (error) => failed(error));
  const ask = (type, extra = {}) =>
    new Promise((resolve) => {
      seq += 1;
      pending.set(seq, (message) => {
        pending.delete(message.seq);
        resolve(message);
      });
      thread.postMessage({ type, seq, ...extra });
    });
  const port = await listening;
  let completion;
  return {
    port,
    /** Forgets every id seen; `completed()` then resolves when `expect` unique ids have arrived. */
    async reset(expect) {
      completion = new Promise((resolve) => (onComplete = resolve));
      await ask('reset', { expect });
    },
    completed: () => completion,
    report: () => ask('report'),
    async close() {
      thread.postMessage({ type: 'close' });
      await Promise.race([new Promise((resolve) => thread.once('exit', resolve)), sleep(2_000)]);
      await thread.terminate();
    },
  };
}

async function deliveryStatuses(client) {
  const { rows } = await client.query('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

if (isMainThread) await runBench();
else receiverThread();
