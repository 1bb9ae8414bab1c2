import { spawn } from 'node:child_process';

export interface ProcessRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  pid: number | undefined;
}

const OUTPUT_LIMIT = 256 * 1024;

/** Signals a whole process group (the group of a process started by {@link runProcess}). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/**
 * Runs an argv without a shell, in its own process group, with exactly `env`. When it has not ended after
 * `timeoutMs`, the whole group is stopped: SIGINT, then SIGTERM after `graceMs`, then SIGKILL after another
 * `graceMs`. Resolves when the process has ended, with its (bounded) output.
 */
export function runProcess(
  argv: string[],
  options: {
    env: Record<string, string>;
    cwd?: string;
    timeoutMs: number;
    graceMs: number;
    /** Told the pid once the process runs (its process group has the same id). */
    onStart?: (pid: number) => void;
  },
): Promise<ProcessRun> {
  const [program, ...args] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      env: options.env,
      cwd: options.cwd,
      detached: true,
      shell: false,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) options.onStart?.(child.pid);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timers: NodeJS.Timeout[] = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < OUTPUT_LIMIT) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < OUTPUT_LIMIT) stderr += chunk;
    });
    timers.push(
      setTimeout(() => {
        if (child.pid === undefined || child.exitCode !== null) return;
        timedOut = true;
        const pid = child.pid;
        signalGroup(pid, 'SIGINT');
        timers.push(setTimeout(() => signalGroup(pid, 'SIGTERM'), options.graceMs));
        timers.push(setTimeout(() => signalGroup(pid, 'SIGKILL'), 2 * options.graceMs));
      }, options.timeoutMs),
    );
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      for (const timer of timers) clearTimeout(timer);
      // Anything the command left behind in its group goes with it.
      if (timedOut && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      resolve({ exitCode, signal, stdout, stderr, timedOut, pid: child.pid });
    };
    child.once('error', (error) => {
      stderr += error.message;
      finish(null, null);
    });
    child.once('close', finish);
  });
}
