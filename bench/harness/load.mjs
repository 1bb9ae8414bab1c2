// Load loops beyond the closed loop of `@svc/testing`: an open loop at a fixed rate, slices alternated over
// several targets (with the CPU time of each target's processes), a keep-alive `node:http` sender and
// round trips over persistent connections (WebSocket echo). Not a bench itself.
import http from 'node:http';
import https from 'node:https';
import { testing } from './cli.mjs';
import { cpuMs } from './proc.mjs';
import { sleep } from './stack.mjs';

/** Sends at a fixed rate whatever the answers; latency counts from each request's scheduled time. */
export async function openLoop(send, perSecond, ms) {
  const latencies = [];
  const errors = new Map();
  const interval = 1000 / perSecond;
  const total = Math.floor((ms / 1000) * perSecond);
  const start = performance.now();
  const inFlight = [];
  for (let i = 0; i < total; i += 1) {
    const scheduled = start + i * interval;
    const wait = scheduled - performance.now();
    if (wait > 1) await sleep(wait);
    inFlight.push(
      send(i).then((error) => {
        if (error) errors.set(error, (errors.get(error) ?? 0) + 1);
        else latencies.push(performance.now() - scheduled);
      }),
    );
  }
  await Promise.all(inFlight);
  return { latencies, errors, elapsedMs: performance.now() - start };
}

/**
 * Measures every target in alternating slices, `rounds` of `durationMs / rounds` each, so a change of load on
 * the machine hits them alike. `runSlice(target, ms, record)` runs one slice and resolves to its run
 * (latencies, errors by label, elapsed ms). With `warmupMs`, every target first runs one unrecorded slice that
 * long; with `rotate`, each round starts one target further (a, b, c, b, c, a, c, a, b, …), so no target always
 * follows the same one; with `cpu`, the CPU time of each target's `pids` during its slices is added as
 * `cpu_ms_per_1000` (null for a target without pids). Resolves to one summary per target (with its `key` when
 * it has one), or undefined when `interrupted` is aborted.
 */
export async function alternate(targets, options) {
  const { warmupMs, durationMs, rounds, rotate = false, cpu = false, runSlice, interrupted } = options;
  if (warmupMs !== undefined) {
    for (const target of targets) {
      if (interrupted?.aborted) return undefined;
      await runSlice(target, warmupMs, false);
    }
  }
  const totals = targets.map(() => ({ latencies: [], errors: new Map(), elapsedMs: 0, cpuMs: 0 }));
  for (let round = 0; round < rounds; round += 1) {
    for (let k = 0; k < targets.length; k += 1) {
      const i = rotate ? (k + round) % targets.length : k;
      const target = targets[i];
      if (interrupted?.aborted) return undefined;
      const cpuBefore = cpu ? cpuMs(target.pids) : undefined;
      const run = await runSlice(target, durationMs / rounds, true);
      const cpuAfter = cpu ? cpuMs(target.pids) : undefined;
      const total = totals[i];
      for (const latency of run.latencies) total.latencies.push(latency);
      for (const [label, n] of run.errors) total.errors.set(label, (total.errors.get(label) ?? 0) + n);
      total.elapsedMs += run.elapsedMs;
      total.cpuMs =
        cpuBefore === undefined || cpuAfter === undefined ? NaN : total.cpuMs + cpuAfter - cpuBefore;
    }
  }
  return targets.map((target, i) => {
    const summary = testing().summarizeLoad(target.name, totals[i]);
    const row = target.key === undefined ? summary : { key: target.key, ...summary };
    if (cpu) row.cpu_ms_per_1000 = target.pids ? (totals[i].cpuMs / summary.requests) * 1000 : null;
    return row;
  });
}

/**
 * A `Send` (see `@svc/testing`'s closed loop) over `agent`'s keep-alive connections with `node:http` or
 * `node:https` (no fetch in between): `request(sequence)` gives the method, headers and body of each request
 * (default a GET). It succeeds on `status` (default 200) and fails as `HTTP <status>`, the socket error's code
 * or `timeout` after `timeoutMs`.
 */
export function nodeSender(url, { agent, request = () => ({}), status = 200, ca, timeoutMs }) {
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : http;
  return (sequence) =>
    new Promise((resolve) => {
      const { method = 'GET', headers = {}, body } = request(sequence);
      const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body, 'utf8')) };
      const req = transport.request(
        {
          hostname: target.hostname,
          port: Number(target.port),
          path: target.pathname,
          method,
          agent,
          ...(ca ? { ca } : {}),
          headers: { ...headers, ...length },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === status ? null : `HTTP ${res.statusCode}`));
          res.on('error', (error) => resolve(error.code ?? 'error'));
        },
      );
      if (timeoutMs)
        req.setTimeout(timeoutMs, () =>
          req.destroy(Object.assign(new Error('timeout'), { code: 'timeout' })),
        );
      req.on('error', (error) => resolve(error.code ?? 'error'));
      req.end(body);
    });
}

/** One open `ws` connection that sends `message` and awaits its echo. */
export function echoClient(ws, message) {
  let waiter;
  const settle = (failure) => {
    const resolve = waiter;
    waiter = undefined;
    resolve?.(failure);
  };
  ws.on('message', (data) => settle(data.length === message.length ? null : 'bad echo'));
  ws.on('close', () => settle('closed'));
  ws.on('error', () => undefined);
  return {
    ws,
    open: () => ws.readyState === ws.OPEN,
    roundTrip: () =>
      new Promise((resolve) => {
        waiter = resolve;
        ws.send(message);
      }),
    /** Ends a wait that will never be answered (the slice's time limit). */
    abandon: () => settle('timeout'),
  };
}

/**
 * Every {@link echoClient} sends and awaits its echo in a loop for `durationMs`; a client stops at its first
 * failure. A round trip still unanswered `timeoutMs` after the end counts as `timeout`.
 */
export async function echoSlice(clients, durationMs, record, timeoutMs) {
  const latencies = [];
  const errors = new Map();
  const started = performance.now();
  const deadline = started + durationMs;
  const limit = setTimeout(() => clients.forEach((c) => c.abandon()), durationMs + timeoutMs);
  await Promise.all(
    clients.map(async (client) => {
      while (performance.now() < deadline && client.open()) {
        const t0 = performance.now();
        const failure = await client.roundTrip();
        if (failure !== null) {
          errors.set(failure, (errors.get(failure) ?? 0) + 1);
          break;
        }
        if (record) latencies.push(performance.now() - t0);
      }
    }),
  );
  clearTimeout(limit);
  return { latencies, errors, elapsedMs: performance.now() - started };
}
