import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const repoRoot = path.resolve(__dirname, '..', '..', '..', '..');

/** Workspace packages the built app requires at run time (from their `dist/`), in build order. */
const WORKSPACE_PACKAGES = ['packages/auth', 'packages/contracts', 'packages/service-kit'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stale: its owner has died, or it has had no owner for a minute (the owner died before writing it). */
function lockIsStale(lockDir: string, ownerFile: string): boolean {
  try {
    const owner = Number(fs.readFileSync(ownerFile, 'utf8'));
    return owner > 0 && !alive(owner);
  } catch {
    try {
      return Date.now() - fs.statSync(lockDir).mtimeMs > 60_000;
    } catch {
      return false; // released meanwhile
    }
  }
}

/**
 * A lock shared by every test file that builds workspace packages into their `dist/`, so one file never
 * starts a process from a `dist/` another file is rewriting. A lock left by a dead process is taken over.
 */
async function acquireBuildLock(timeoutMs: number): Promise<() => void> {
  const hash = createHash('sha256').update(repoRoot).digest('hex').slice(0, 12);
  const lockDir = path.join(os.tmpdir(), `svc-dist-build-${hash}.lock`);
  const ownerFile = path.join(lockDir, 'pid');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      fs.mkdirSync(lockDir);
      fs.writeFileSync(ownerFile, String(process.pid));
      return () => fs.rmSync(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (lockIsStale(lockDir, ownerFile)) {
      fs.rmSync(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir}`);
    await sleep(200);
  }
}

async function tsc(dir: string): Promise<void> {
  await execFileAsync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: path.join(repoRoot, dir),
    },
  );
}

/**
 * Compiles the packages the app needs and the app itself, and keeps the build lock until the returned
 * release function is called (after the file's last process has started).
 */
export async function buildAppWithDependencies(appDir: string): Promise<() => void> {
  const release = await acquireBuildLock(240_000);
  try {
    for (const dir of WORKSPACE_PACKAGES) await tsc(dir);
    await tsc(path.relative(repoRoot, appDir));
    return release;
  } catch (error) {
    release();
    throw error;
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface EntryPoint {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name) once the process has ended. */
  exited: Promise<number | string>;
}

/** Starts `node dist/main.js` in the app directory with only the given variables (plus PATH). */
export function startEntryPoint(appDir: string, env: Record<string, string>): EntryPoint {
  const child = spawn(process.execPath, ['dist/main.js'], {
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
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Polls `<url>/healthz` until it answers 200; fails early when the process exits. */
export async function waitUntilLive(entry: EntryPoint, url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  void entry.exited.then(() => (ended = true));
  while (Date.now() < deadline) {
    if (ended) throw new Error(`process exited early: ${entry.stderr() || entry.stdout()}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`not live within ${timeoutMs} ms: ${entry.stderr() || entry.stdout()}`);
}

/** The exit code, or `timeout` when the process is still running after `ms`. */
export function exitWithin(entry: EntryPoint, ms: number): Promise<number | string> {
  return Promise.race([entry.exited, sleep(ms).then(() => 'timeout')]);
}
