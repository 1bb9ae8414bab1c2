// Starting what a bench measures and taking it all down again: the deployed launch settings, clean-up on
// failure and Ctrl-C, processes that are not entry points of this repository (nginx, a proxy), temp dirs and
// the bench's hub workspace. Not a bench itself.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testing } from './cli.mjs';
import { lineCounter, printLines } from './output.mjs';

/**
 * How every service process is started where it is deployed (infra/docker and the Kubernetes manifests,
 * `svc runtime up`, the development stack; decision 55): its Node options, and glibc's malloc told to give large
 * blocks back to the system when they are freed.
 */
export const DEPLOYED_NODE_OPTIONS = '--max-semi-space-size=4';
export const DEPLOYED_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The Redis the queues of a bench use (each under a prefix of its own). */
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export const sleep = (ms) => testing().sleep(ms);

/** A sleep that does not keep the process alive (the time limit of a race). */
export const idle = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Clean-up of a bench that starts processes and makes databases and queue keys: `push` a step as soon as its
 * thing exists; `tearDown()` stops the processes, then runs the steps newest first, once, whoever asks first.
 * On SIGINT/SIGTERM `interrupted` is aborted (measurements stop, nothing is reported), everything is torn down
 * and the bench exits 130/143. A process started with {@link logged} options and registered with `track` has
 * what it wrote counted, for `printOutputs` when a run fails.
 */
export function cleanupStack(name, what) {
  const steps = [];
  const procs = [];
  const written = new Map();
  const interrupted = new AbortController();
  let tearingDown;
  const tearDown = () =>
    (tearingDown ??= (async () => {
      await Promise.all(procs.map((proc) => proc.stop().catch(() => undefined)));
      for (const step of steps.reverse()) {
        try {
          await step();
        } catch (error) {
          console.error(`${name}: clean-up step failed: ${error instanceof Error ? error.message : error}`);
          process.exitCode = 1;
        }
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      interrupted.abort();
      console.error(`${name}: ${signal}; ${what}`);
      void tearDown().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  return {
    interrupted: interrupted.signal,
    procs,
    push: (step) => steps.push(step),
    tearDown,
    /** Start options of a process named `label` whose output is kept (its tail) and counted as distinct lines. */
    logged(label, { times = true, ...options } = {}) {
      const counter = lineCounter({ times });
      return { name: label, outputLimit: 16_000, ...options, onLine: (line) => counter.add(line), counter };
    },
    /**
     * Registers a started process: stopped at tear-down (given `stopWithinMs` before SIGKILL when set), and
     * what it wrote kept when it was started with {@link logged} options.
     */
    track(proc, options, stopWithinMs) {
      procs.push(stopWithinMs ? { stop: () => proc.stop('SIGTERM', stopWithinMs) } : proc);
      if (options?.counter) written.set(proc, options.counter);
      return proc;
    },
    /** What a tracked process wrote, as distinct lines with counts (none for a process not started logged). */
    written: (proc) => written.get(proc)?.summary() ?? { lines: [] },
    /** What every tracked process wrote (on stderr); `exited` marks those that are no longer running. */
    printOutputs({ exited = true } = {}) {
      for (const [proc, counter] of written)
        printLines(`${proc.name}${exited && !proc.running() ? ' (exited)' : ''}`, counter.summary());
    },
  };
}

/** A temp dir named `prefix…`, removed at tear-down. */
export function tempDir(teardown, prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  teardown.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * The bench's workspace (slug `bench`) and its owner, made through the hub's public API with the harness's
 * `createHubWorkspace`.
 */
export function createBenchWorkspace(hubUrl, databaseUrl) {
  return testing().createHubWorkspace({
    hubUrl,
    databaseUrl,
    slug: 'bench',
    name: 'Benchmark',
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
  });
}

/**
 * A process that is not a Node entry point of this repository (nginx, configurable-http-proxy), with the same
 * shape as the harness's: `name`, `child`, `exited`, `running()`, `output()` (its last 8 000 characters) and
 * `stop()`.
 */
export function startTool(name, command, args, env = {}) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => (output = (output + chunk).slice(-8000)));
  }
  const exited = new Promise((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
    child.once('error', (error) => resolve(error.message));
  });
  const running = () => child.exitCode === null && child.signalCode === null && child.pid !== undefined;
  const proc = {
    name,
    child,
    exited,
    running,
    output: () => output,
    async stop(signal = 'SIGTERM', withinMs = 10_000) {
      if (running()) child.kill(signal);
      const code = await testing().exitWithin(proc, withinMs);
      if (code === 'timeout') child.kill('SIGKILL');
      return code;
    },
  };
  return proc;
}

/** An executable: the given path, or the first `name` on PATH (and the usual sbin folders); undefined if none. */
export function findExecutable(given, name) {
  const candidates = given
    ? [path.resolve(given)]
    : [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  return candidates.find((file) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Polls `url` until it answers `status` with `body` (when given); fails when `proc` exits or time is up. */
export async function waitForAnswer(
  proc,
  url,
  { headers = {}, status = 200, body, timeoutMs = 20_000 } = {},
) {
  let last = 'no answer';
  const exited = proc.exited.then((code) => {
    throw new Error(`${proc.name} exited during start-up (${code}):\n${proc.output()}`);
  });
  exited.catch(() => undefined); // a process stopped later, after it answered
  const answered = testing().eventually(
    async () => {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(2_000) });
      const text = await res.text();
      last = `HTTP ${res.status} ${text.slice(0, 200)}`;
      return res.status === status && (body === undefined || text === body);
    },
    timeoutMs,
    `${proc.name} to answer ${status} at ${url}`,
    { describe: () => `last answer: ${last}` },
  );
  await Promise.race([answered, exited]);
}

/**
 * A self-signed certificate for 127.0.0.1 made with `openssl` in `dir`: `{ key, cert }` as PEM, and `caFile`,
 * the certificate's path for a client to trust.
 */
export function selfSignedCertificate(dir) {
  const keyFile = path.join(dir, 'receiver-key.pem');
  const caFile = path.join(dir, 'receiver-cert.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', keyFile, '-out', caFile, '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1'],
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(caFile, 'utf8'), caFile };
}

/** Node options that make a process write a CPU profile into `dir` when it stops (none without a dir). */
export const cpuProfileArgs = (dir) => (dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []);

/** Stops `proc`, so it writes its CPU profile into `dir`, and says which are its profiles there (on stderr). */
export async function reportCpuProfiles(bench, proc, dir, whose) {
  const pid = proc.child.pid;
  await proc.stop('SIGTERM', 15_000);
  // Node names a profile CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile.
  const profiles = readdirSync(dir).filter(
    (file) => file.endsWith('.cpuprofile') && file.includes(`.${pid}.`),
  );
  console.error(`${bench}: ${whose} in ${dir}: ${profiles.join(', ')}`);
}
