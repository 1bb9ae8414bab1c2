import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What {@link eventually} waits for: a value other than `undefined`, `null` and `false`. */
export type Settled<T> = Exclude<T, undefined | null | false>;

export interface EventuallyOptions {
  /** Pause between two checks (default 100 ms). */
  intervalMs?: number;
  /** More to print when the time is up (the state that was waited on, a log tail, …). */
  describe?: () => string;
}

/**
 * Asks `check` until it answers a value other than `undefined`, `null` or `false`, and returns that value (so
 * `() => x === y` waits for a condition and `async () => (await read()).state === 'done' && row` for a row). A
 * check that throws is asked again. After `timeoutMs` it fails naming `what`, with the last error and what `describe` adds.
 * The one polling helper of the tests: no test defines its own.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
  options: EventuallyOptions = {},
): Promise<Settled<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== null && value !== false) return value as Settled<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) break;
    await sleep(Math.min(options.intervalMs ?? 100, Math.max(0, deadline - Date.now())));
  }
  const error =
    lastError === undefined
      ? ''
      : ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})`;
  const more = options.describe?.();
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${error}${more ? `\n${more}` : ''}`);
}
/** A sleep that does not keep the process alive (the time limit of a race). */
const idle = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

/** Ports this process was given already: never given twice, even once closed again. */
const portsGiven = new Set<number>();

/**
 * The ports this process picks from: below the kernel's ephemeral range (where outgoing connections take their
 * local ports, so a port handed out here is not taken by a connection to Postgres before its service binds it),
 * one slice per Jest worker so parallel test files do not pick the same one.
 */
function portSlice(): { low: number; high: number } {
  let ephemeralLow = 32_768;
  try {
    ephemeralLow = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
  } catch {
    // Not Linux: the common default.
  }
  const low = 10_000;
  const high = Math.max(low + 1_000, ephemeralLow - 1);
  const slices = 8;
  const worker = Number(process.env.JEST_WORKER_ID ?? '0');
  if (!Number.isInteger(worker) || worker < 1) return { low, high };
  const size = Math.floor((high - low + 1) / slices);
  const sliceLow = low + ((worker - 1) % slices) * size;
  return { low: sliceLow, high: sliceLow + size - 1 };
}

let nextPort: number | undefined;

/**
 * The ports at or above 1024 that Node's fetch and the browsers refuse to connect to (the Fetch standard's "bad
 * ports"; the rest are below 1024, where {@link freePort} never looks): a service given one would never answer a
 * readiness probe (`fetch failed`, cause `bad port`).
 */
const FETCH_REFUSED_PORTS = new Set([
  1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697,
  10080,
]);

export function fetchRefusesPort(port: number): boolean {
  return FETCH_REFUSED_PORTS.has(port);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * A port that was free a moment ago on 127.0.0.1, never one this process was given before: two services of one
 * stack (a relay and a console router, say) asked for ports one after the other must not get the same one.
 */
export async function freePort(): Promise<number> {
  const { low, high } = portSlice();
  nextPort ??= low + Math.floor(Math.random() * (high - low + 1));
  for (let tried = 0; tried <= high - low; tried += 1) {
    const port: number = nextPort;
    nextPort = port >= high ? low : port + 1;
    if (portsGiven.has(port) || fetchRefusesPort(port)) continue;
    if (await canListen(port)) {
      portsGiven.add(port);
      return port;
    }
  }
  throw new Error(`no free port on 127.0.0.1 between ${low} and ${high}`);
}

export interface StartOptions {
  /** How failures name the process (default: the script's path). */
  name?: string;
  /** Arguments after the script. */
  args?: string[];
  /** Node options before the script, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** `ignore` sends stdout nowhere (a process logging every request under load); default `keep`. */
  stdout?: 'keep' | 'ignore';
  /** Keep only the last this many characters of each captured stream (default: everything). */
  outputLimit?: number;
  /** Called with every complete line the process writes, e.g. to prefix or count it. */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Own process group: a terminal's Ctrl-C reaches the parent only, which then stops the child itself. */
  detached?: boolean;
  /** Written to the process's stdin, which is then closed (e.g. a password for `--password-stdin`). */
  input?: string;
  /**
   * A command that runs node in its place (it must exec node, so the pid stays node's), e.g.
   * `['ip', 'netns', 'exec', 'ns1']` to run the process in a network namespace.
   */
  wrap?: string[];
}

export interface NodeProcess {
  name: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Both streams as written, interleaved (within `outputLimit`). */
  output: () => string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  /** Whether the process is still running. */
  running(): boolean;
  /**
   * Sends the signal (default SIGTERM) and resolves with the exit code; after `withinMs` the process is killed
   * with SIGKILL and `timeout` is returned.
   */
  stop(signal?: NodeJS.Signals, withinMs?: number): Promise<number | string>;
}

/** Appends `chunk` to `text`, keeping at most `limit` characters from the end. */
function appendTail(text: string, chunk: string, limit: number): string {
  const joined = text + chunk;
  return joined.length > limit ? joined.slice(joined.length - limit) : joined;
}

/**
 * Runs a built entry point (`dist/…js`) of an app exactly as deployed, with only the given environment
 * (plus PATH). The README's test command builds everything first; run `pnpm build` before calling jest
 * directly.
 */
export function startBuiltEntryPoint(
  appDir: string,
  script: string,
  env: Record<string, string>,
  options: StartOptions = {},
): NodeProcess {
  const file = path.resolve(appDir, script);
  if (!existsSync(file))
    throw new Error(`${file} is missing: run \`pnpm build\` first (the README's test command does)`);
  const nodeArgv = [process.execPath, ...(options.nodeArgs ?? []), file, ...(options.args ?? [])];
  const argv = [...(options.wrap ?? []), ...nodeArgv];
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: appDir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: [
      options.input === undefined ? 'ignore' : 'pipe',
      options.stdout === 'ignore' ? 'ignore' : 'pipe',
      'pipe',
    ],
    detached: options.detached ?? false,
  });
  if (options.input !== undefined && child.stdin) {
    child.stdin.on('error', () => undefined); // a process that exits without reading its input
    child.stdin.end(options.input);
  }
  const limit = options.outputLimit ?? Infinity;
  const captured = { stdout: '', stderr: '', output: '' };
  for (const stream of ['stdout', 'stderr'] as const) {
    const source = child[stream];
    if (!source) continue;
    source.setEncoding('utf8');
    source.on('data', (chunk: string) => {
      captured[stream] = appendTail(captured[stream], chunk, limit);
      captured.output = appendTail(captured.output, chunk, limit);
    });
    const onLine = options.onLine;
    if (onLine) createInterface({ input: source }).on('line', (line) => onLine(line, stream));
  }
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const proc: NodeProcess = {
    name: options.name ?? path.relative(process.cwd(), file),
    child,
    stdout: () => captured.stdout,
    stderr: () => captured.stderr,
    output: () => captured.output,
    exited,
    running,
    async stop(signal = 'SIGTERM', withinMs = 10_000) {
      if (running()) child.kill(signal);
      const code = await exitWithin(proc, withinMs);
      if (code === 'timeout') child.kill('SIGKILL');
      return code;
    },
  };
  return proc;
}

/**
 * Runs a one-shot built command (a migration, a bootstrap) to completion and resolves with its stdout; a
 * non-zero exit fails naming the command and what it wrote to stderr (or its last stdout line).
 */
export async function runBuiltEntryPoint(
  appDir: string,
  script: string,
  env: Record<string, string>,
  options: Pick<StartOptions, 'name' | 'args' | 'input'> = {},
): Promise<string> {
  const proc = startBuiltEntryPoint(appDir, script, env, options);
  const code = await proc.exited;
  if (code !== 0) {
    const said = proc.stderr().trim() || proc.stdout().trim().split('\n').pop() || `exit ${code}`;
    throw new Error(`${proc.name} failed: ${said}`);
  }
  return proc.stdout();
}

/**
 * Polls `<url><probe>` (default `/healthz`) until it answers 200. Fails early, with what the process wrote,
 * when it exits; fails naming the process, the URL and its output when the time is up.
 */
export async function waitUntilLive(
  proc: Pick<NodeProcess, 'name' | 'exited' | 'output'>,
  url: string,
  options: { timeoutMs?: number; probe?: string } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const probe = `${url}${options.probe ?? '/healthz'}`;
  let exitCode: number | string | undefined;
  void proc.exited.then((code) => (exitCode = code));
  let last = 'no answer';
  const outcome = await eventually(
    async () => {
      if (exitCode !== undefined) return 'exited';
      try {
        const res = await fetch(probe, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        if (res.status === 200) return 'live';
        last = `HTTP ${res.status}`;
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        last = cause?.code ?? cause?.message ?? (error as Error).message;
      }
      return false;
    },
    timeoutMs,
    probe,
  ).catch(() => 'silent' as const);
  if (outcome === 'live') return;
  if (outcome === 'exited')
    throw new Error(`${proc.name} exited during start-up (${exitCode}):\n${proc.output()}`);
  throw new Error(
    `${proc.name} was not ready at ${probe} within ${timeoutMs / 1000} s (${last}):\n${proc.output()}`,
  );
}

/** {@link waitUntilLive} on `/readyz`, with the 30 s start-up allowance of a loaded machine. */
export function waitUntilReady(
  proc: Pick<NodeProcess, 'name' | 'exited' | 'output'>,
  url: string,
  timeoutMs = 30_000,
): Promise<void> {
  return waitUntilLive(proc, url, { probe: '/readyz', timeoutMs });
}

/** The exit code, or `timeout` when the process is still running after `ms`. */
export function exitWithin(proc: Pick<NodeProcess, 'exited'>, ms: number): Promise<number | string> {
  return Promise.race([proc.exited, idle(ms).then(() => 'timeout' as const)]);
}
