import type { ChildRegistry } from '@svc/service-kit/child-registry';
import { runBuiltEntryPoint, startBuiltEntryPoint } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';

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
  process: NodeProcess;
  exitCode: number | string | undefined;
  /** Set when the stack stopped it on purpose. */
  stopped: boolean;
}

/**
 * How every service is started for memory, as in the images (infra/docker/Dockerfile): a small young generation
 * and large freed blocks given back by glibc's malloc (docs/benchmarks.md, "Service memory").
 */
export const SERVICE_MEMORY_ENV = {
  NODE_OPTIONS: '--max-semi-space-size=4',
  MALLOC_MMAP_THRESHOLD_: '131072',
} as const;

/**
 * The stack's child processes (started with `@svc/testing`'s process helpers): each line they print is
 * prefixed with their name; stopping sends SIGTERM to all, waits for them, and SIGKILLs what is left after the
 * grace period. Each child is recorded in the registry (`<state>/children.json`) while it runs, so that the
 * next start stops what a stack that was killed left behind.
 */
export class ProcessGroup {
  private readonly processes: ManagedProcess[] = [];
  private stopping = false;

  constructor(
    private readonly options: { rawLogs: boolean; write: (line: string) => void; registry: ChildRegistry },
  ) {}

  start(
    name: string,
    script: string,
    env: Record<string, string>,
    onUnexpectedExit: (name: string, code: number | string) => void,
    args: string[] = [],
  ): ManagedProcess {
    const prefix = `[${name}]`.padEnd(18);
    // Own process group: a Ctrl-C in the terminal reaches the stack only, which then stops each child
    // exactly once (a child that got both the terminal's SIGINT and our SIGTERM would take it as a
    // second, impatient signal).
    const child = startBuiltEntryPoint(
      process.cwd(),
      script,
      { ...SERVICE_MEMORY_ENV, ...env },
      {
        name,
        args,
        detached: true,
        outputLimit: 8_000,
        onLine: (line) =>
          this.options.write(`${prefix} ${this.options.rawLogs ? line : formatLogLine(line)}`),
      },
    );
    const managed: ManagedProcess = { name, process: child, exitCode: undefined, stopped: false };
    const pid = child.child.pid;
    const recorded = pid === undefined ? Promise.resolve() : this.options.registry.add(name, pid);
    void child.exited.then((code) => {
      managed.exitCode = code;
      if (!this.stopping && !managed.stopped) onUnexpectedExit(name, code);
      if (pid !== undefined) void recorded.then(() => this.options.registry.remove(pid));
    });
    this.processes.push(managed);
    return managed;
  }

  /** Exit codes of the children that have ended, by name. */
  exitCodes(): Record<string, number | string | undefined> {
    return Object.fromEntries(this.processes.map((p) => [p.name, p.exitCode]));
  }

  /** Last resort when the stack itself exits: no child outlives it. */
  killAll(): void {
    for (const p of this.processes) if (p.process.running()) p.process.child.kill('SIGKILL');
  }

  /** Runs a one-shot command to completion, returning its stdout; fails with its stderr. */
  run(name: string, script: string, env: Record<string, string>): Promise<string> {
    return runBuiltEntryPoint(process.cwd(), script, env, { name });
  }

  /** Stops one child ahead of the others (SIGTERM, SIGKILL after the grace period). */
  async stop(managed: ManagedProcess, graceMs = 10_000): Promise<void> {
    managed.stopped = true;
    if (managed.process.running()) await managed.process.stop('SIGTERM', graceMs);
    await managed.process.exited;
  }

  async stopAll(graceMs = 25_000): Promise<void> {
    this.stopping = true;
    const running = this.processes.filter((p) => p.process.running());
    await Promise.all(
      running.map(async (p) => {
        await p.process.stop('SIGTERM', graceMs);
        await p.process.exited;
      }),
    );
    // Every child has exited: nothing is left for a next start to stop.
    await this.options.registry.clear();
  }
}
