import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The CLI package (apps/svc-cli); the tests run its build (`bin/run.js` over dist/), exactly as installed. */
export const appDir = path.resolve(__dirname, '..', '..');
export const bin = path.join(appDir, 'bin', 'run.js');
export const referenceAgentMain = path.resolve(appDir, '..', 'reference-agent', 'dist', 'main.js');

/** Fails the suite early when dist/ lacks `commands/<command>.js` (e.g. 'login', 'runtime/up'). */
export function assertBuilt(command: string, what: string): void {
  if (!fs.existsSync(path.join(appDir, 'dist', 'commands', `${command}.js`))) {
    throw new Error(`apps/svc-cli/dist is missing ${what}: run \`pnpm --filter @svc/cli build\` first`);
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: a throw-away HOME, no SVC_ variable of the machine, then `env`. */
export function cliEnv(home: string, env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  for (const key of Object.keys(out)) {
    if (key.startsWith('SVC_') || key === 'DEBUG' || key === 'XDG_CONFIG_HOME') delete out[key];
  }
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** Runs the built CLI (`node bin/run.js …`) to completion as a real process; stdin is a pipe (never a terminal). */
export function runSvc(
  args: string[],
  home: string,
  env: Record<string, string | undefined> = {},
  stdin = '',
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: appDir,
      env: cliEnv(home, env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

/** A long-running CLI process (`svc runtime up`) with its output captured. */
export interface SvcProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | string>;
  running(): boolean;
}

export function startSvc(
  args: string[],
  home: string,
  env: Record<string, string | undefined> = {},
): SvcProcess {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: appDir,
    env: cliEnv(home, env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  return {
    child,
    output: () => output,
    exited,
    running: () => child.exitCode === null && child.signalCode === null,
  };
}

/**
 * Ends a long-running CLI process that is still running: SIGTERM, then SIGKILL when it has not exited within
 * `graceMs`; with a grace of 0, SIGKILL at once (and waits for the exit).
 */
export async function stopSvc(proc: SvcProcess | undefined, graceMs: number): Promise<void> {
  if (!proc?.running()) return;
  if (graceMs <= 0) {
    proc.child.kill('SIGKILL');
    await proc.exited;
    return;
  }
  proc.child.kill('SIGTERM');
  await Promise.race([proc.exited, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
  if (proc.running()) proc.child.kill('SIGKILL');
}

/**
 * The one JSON document a `--json` run printed (the test fails when stdout is anything else); `R` is the
 * shape the test reads its `result` as.
 */
export function jsonOf<R = Record<string, unknown>>(
  result: CliResult,
): {
  ok: boolean;
  result?: R;
  error?: Record<string, unknown> & { code: string; exit_code: number; fix: string | null; message: string };
} {
  try {
    return JSON.parse(result.stdout) as never;
  } catch {
    throw new Error(
      `not one JSON document (exit ${result.code}):\n${result.stdout}\n--- stderr\n${result.stderr}`,
    );
  }
}

export const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/** The end of what a `svc runtime up` process printed, for a failure message. */
export const runtimeOutputOf = (runtime: SvcProcess | undefined) =>
  `--- runtime output\n${runtime?.output().slice(-6000) ?? '(not started)'}`;

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A fresh, empty HOME for one test or suite. */
export function tempHome(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
