import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { decideRestart, wantsRestart } from '../domain/restart-policy';
import { signalProcessGroup } from '@svc/service-kit/child-registry';
import type { ChildRegistry } from '@svc/service-kit/child-registry';
import type { FailureHistory, ProcessExit, RestartPolicy } from '../domain/restart-policy';
import { ensureOwnerOnlyDir, SECRET_FILE_MODE } from './secret-files';

export type ManagedState = 'starting' | 'running' | 'backoff' | 'failed' | 'stopping' | 'stopped';

export interface ManagedProcessOptions {
  name: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** Receives stdout and stderr (appended, mode 0600). */
  logFile: string;
  restart: RestartPolicy;
  /** Whether five failures within 60 s end in `failed` (agents) or restarts go on (the runtime's own services). */
  canGiveUp: boolean;
  /**
   * Called on an exit the supervisor did not ask for, before the restart policy. Answer `restart-now` to start
   * the process again at once (counted as a restart, not as a failure).
   */
  onUnexpectedExit?: (exit: ProcessExit) => Promise<'restart-now' | undefined>;
  /** Called after each spawn and each exit. */
  onChange?: () => void;
  /** One line for the runtime's own output (never a secret). */
  log: (line: string) => void;
  /** Where each spawn and exit is recorded, so a runtime that was killed can stop what it left running. */
  registry?: ChildRegistry;
}

export interface LastExit {
  code: number | null;
  signal: string | null;
  at: string;
}

/** Opens the log for appending with mode 0600 (re-applied), in an owner-only directory; returns the fd. */
async function openLog(file: string): Promise<number> {
  await ensureOwnerOnlyDir(path.dirname(file));
  const fd = openSync(file, 'a', SECRET_FILE_MODE);
  await fs.chmod(file, SECRET_FILE_MODE);
  return fd;
}

/**
 * One supervised child process: spawned from argv without a shell, in its own process group, its output
 * appended to a log file; restarted under a policy with back-off; stopped with SIGTERM to the group, then
 * SIGKILL after a grace period.
 */
export class ManagedProcess {
  state: ManagedState = 'starting';
  pid: number | null = null;
  restarts = 0;
  startedAt = new Date().toISOString();
  lastExit: LastExit | null = null;
  private child: ChildProcess | undefined;
  private history: FailureHistory = { failures: [], consecutive: 0 };
  private timer: NodeJS.Timeout | undefined;
  private exitWaiters: Array<() => void> = [];
  private spawnedAt = 0;
  /** Bumped by every stop(), so a start already under way does not spawn after it. */
  private generation = 0;

  constructor(private options: ManagedProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  get argv(): string[] {
    return this.options.argv;
  }

  /** Replaces the environment for the next start. */
  setEnv(env: Record<string, string>): void {
    this.options = { ...this.options, env };
  }

  /** Spawns the process; resolves once it runs, rejects when it cannot be spawned (e.g. no such command). */
  async start(): Promise<void> {
    this.clearTimer();
    const generation = this.generation;
    this.state = 'starting';
    const fd = await openLog(this.options.logFile);
    if (generation !== this.generation) {
      // stop() was called while the log was being opened: stay stopped.
      closeSync(fd);
      return;
    }
    const [command, ...args] = this.options.argv;
    let child: ChildProcess;
    try {
      child = spawn(command!, args, {
        cwd: this.options.cwd,
        env: this.options.env,
        stdio: ['ignore', fd, fd],
        detached: true,
        shell: false,
      });
    } finally {
      // The child holds its own copy of the descriptor.
      setImmediate(() => closeSync(fd));
    }
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (error) => {
        if (child.pid === undefined) {
          this.child = undefined;
          this.state = 'failed';
          this.pid = null;
          reject(error);
        }
      });
    });
    // Later errors (a signal that could not be delivered) are not fatal to the runtime; the exit decides.
    child.on('error', () => undefined);
    this.pid = child.pid ?? null;
    if (child.pid !== undefined) void this.options.registry?.add(this.name, child.pid);
    this.spawnedAt = Date.now();
    this.startedAt = new Date(this.spawnedAt).toISOString();
    this.state = 'running';
    child.once('exit', (code, signal) => void this.onExit(child, { code, signal }));
    this.options.onChange?.();
  }

  private async onExit(child: ChildProcess, exit: ProcessExit): Promise<void> {
    if (child.pid !== undefined) void this.options.registry?.remove(child.pid);
    if (this.child !== child) return;
    this.child = undefined;
    this.pid = null;
    this.lastExit = { code: exit.code, signal: exit.signal, at: new Date().toISOString() };
    const waiters = this.exitWaiters.splice(0);
    if (this.state === 'stopping' || this.state === 'stopped') {
      this.state = 'stopped';
      for (const w of waiters) w();
      this.options.onChange?.();
      return;
    }
    for (const w of waiters) w();
    const ranMs = Date.now() - this.spawnedAt;
    const hook = await this.options.onUnexpectedExit?.(exit);
    if ((this.state as ManagedState) === 'stopping' || (this.state as ManagedState) === 'stopped') return;
    if (hook === 'restart-now') {
      this.restarts += 1;
      await this.start().catch((error: Error) =>
        this.options.log(`${this.name}: could not start again: ${error.message}`),
      );
      return;
    }
    if (!wantsRestart(this.options.restart, exit)) {
      this.state = exit.code === 0 && exit.signal === null ? 'stopped' : 'failed';
      this.options.onChange?.();
      return;
    }
    this.scheduleRestart(exit, ranMs);
  }

  private scheduleRestart(exit: ProcessExit, ranMs: number): void {
    const decision = decideRestart(this.history, exit, ranMs, Date.now(), this.options.canGiveUp);
    this.history = decision.history;
    if (decision.action === 'give-up') {
      this.state = 'failed';
      this.options.log(
        `${this.name}: ${decision.history.failures.length} failures within 60 s; not restarting it (failed)`,
      );
      this.options.onChange?.();
      return;
    }
    this.state = 'backoff';
    this.options.log(
      `${this.name}: exited (${exit.signal ?? `code ${exit.code}`}); starting it again in ${Math.round(decision.delayMs / 1000)} s`,
    );
    this.options.onChange?.();
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.state !== 'backoff') return;
      this.restarts += 1;
      this.start().catch((error: Error) => {
        this.options.log(`${this.name}: could not start again: ${error.message}`);
        this.scheduleRestart({ code: 127, signal: null }, 0);
      });
    }, decision.delayMs);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Whether a process of this supervisor is alive now. */
  running(): boolean {
    return this.child !== undefined;
  }

  private signalGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid !== undefined) signalProcessGroup(pid, signal);
  }

  /**
   * Sends `signal` to the process itself, not its group (e.g. SIGHUP: re-read configuration); false when no
   * process runs or it could not be signalled.
   */
  signalProcess(signal: NodeJS.Signals): boolean {
    const pid = this.child?.pid;
    if (pid === undefined) return false;
    try {
      return process.kill(pid, signal);
    } catch {
      return false;
    }
  }

  /** Sends the signal to the process group (test and operator use: a crash, not a stop). */
  kill(signal: NodeJS.Signals): void {
    this.signalGroup(signal);
  }

  /** Stops the process (SIGTERM to its group, SIGKILL after `graceMs`) and keeps it stopped. */
  async stop(graceMs: number): Promise<void> {
    this.clearTimer();
    this.generation += 1;
    if (!this.child) {
      this.state = 'stopped';
      return;
    }
    this.state = 'stopping';
    const exited = new Promise<void>((resolve) => this.exitWaiters.push(resolve));
    this.signalGroup('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), graceMs);
      }),
    ]);
    if (timer) clearTimeout(timer);
    if (timedOut) {
      this.options.log(`${this.name}: did not stop within ${Math.round(graceMs / 1000)} s; killing it`);
      this.signalGroup('SIGKILL');
      await exited;
    }
    this.state = 'stopped';
  }

  /** Stops the process if it runs and starts it again, with a fresh failure history. */
  async restartNow(graceMs: number): Promise<void> {
    await this.stop(graceMs);
    this.history = { failures: [], consecutive: 0 };
    this.restarts += 1;
    await this.start();
  }
}
