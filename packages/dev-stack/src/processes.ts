import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const HIDDEN_FIELDS = new Set(['time', 'level', 'msg', 'service', 'pid', 'name', 'hostname']);

/** Turns a pino JSON line into `HH:MM:SS LEVEL msg key=value …`; other lines pass through. */
export function formatLogLine(line: string): string {
  if (!line.startsWith('{')) return line;
  try {
    const entry = JSON.parse(line) as Record<string, unknown>;
    const time = typeof entry.time === 'string' ? entry.time.slice(11, 19) : '';
    const level = String(entry.level ?? '')
      .toUpperCase()
      .padEnd(5);
    const fields = Object.entries(entry)
      .filter(([key]) => !HIDDEN_FIELDS.has(key))
      .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join(' ');
    return `${time} ${level} ${String(entry.msg ?? '')}${fields ? ` ${fields}` : ''}`;
  } catch {
    return line;
  }
}

export interface ManagedProcess {
  name: string;
  child: ChildProcess;
  exited: Promise<number | string>;
  exitCode: number | string | undefined;
}

/**
 * The stack's child processes: each line they print is prefixed with their name; stopping sends SIGTERM to
 * all, waits for them, and SIGKILLs what is left after the grace period.
 */
export class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];
  private stopping = false;

  constructor(private readonly options: { rawLogs: boolean; write: (line: string) => void }) {}

  start(
    name: string,
    script: string,
    env: Record<string, string>,
    onUnexpectedExit: (name: string, code: number | string) => void,
  ): ManagedProcess {
    // Own process group: a Ctrl-C in the terminal reaches the stack only, which then stops each child
    // exactly once (a child that got both the terminal's SIGINT and our SIGTERM would take it as a
    // second, impatient signal).
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const prefix = `[${name}]`.padEnd(18);
    for (const stream of [child.stdout, child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) =>
        this.options.write(`${prefix} ${this.options.rawLogs ? line : formatLogLine(line)}`),
      );
    }
    const exited = new Promise<number | string>((resolve) =>
      child.once('close', (code, signal) => resolve(code ?? signal ?? -1)),
    );
    void exited.then((code) => {
      if (!this.stopping) onUnexpectedExit(name, code);
    });
    const managed = { name, child, exited, exitCode: undefined as number | string | undefined };
    void exited.then((code) => (managed.exitCode = code));
    this.processes.push(managed);
    return managed;
  }

  /** Exit codes of the children that have ended, by name. */
  exitCodes(): Record<string, number | string | undefined> {
    return Object.fromEntries(this.processes.map((p) => [p.name, p.exitCode]));
  }

  /** Last resort when the stack itself exits: no child outlives it. */
  killAll(): void {
    for (const p of this.processes)
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  }

  /** Runs a one-shot command to completion, returning its stdout; fails with its stderr. */
  async run(name: string, script: string, env: Record<string, string>): Promise<string> {
    const child = spawn(process.execPath, [script], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    if (code !== 0)
      throw new Error(
        `${name} failed: ${stderr.trim() || stdout.trim().split('\n').pop() || `exit ${code}`}`,
      );
    return stdout;
  }

  async stopAll(graceMs = 10_000): Promise<void> {
    this.stopping = true;
    const running = this.processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    for (const p of running) p.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const p of running)
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    }, graceMs);
    await Promise.all(running.map((p) => p.exited));
    clearTimeout(timer);
  }
}
