import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface NodeProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
  /** Sends the signal (default SIGTERM) and resolves with the exit code, or `timeout`. */
  stop(signal?: NodeJS.Signals, withinMs?: number): Promise<number | string>;
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
  args: string[] = [],
): NodeProcess {
  const file = path.join(appDir, script);
  if (!existsSync(file))
    throw new Error(`${file} is missing: run \`pnpm build\` first (the README's test command does)`);
  const child = spawn(process.execPath, [file, ...args], {
    cwd: appDir,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.once('close', (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const proc: NodeProcess = {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    stop(signal = 'SIGTERM', withinMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exitWithin(proc, withinMs);
    },
  };
  return proc;
}

/** Polls `<url><probe>` until it answers 200; fails early when the process exits. */
export async function waitUntilLive(
  proc: NodeProcess,
  url: string,
  options: { timeoutMs?: number; probe?: string } = {},
): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void proc.exited.then(() => (ended = true));
  while (Date.now() < deadline) {
    if (ended) throw new Error(`process exited early: ${proc.stderr() || proc.stdout()}`);
    try {
      const res = await fetch(`${url}${options.probe ?? '/healthz'}`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`not live within ${timeoutMs} ms: ${proc.stderr() || proc.stdout()}`);
}

/** The exit code, or `timeout` when the process is still running after `ms`. */
export function exitWithin(proc: Pick<NodeProcess, 'exited'>, ms: number): Promise<number | string> {
  return Promise.race([proc.exited, sleep(ms).then(() => 'timeout' as const)]);
}
