import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

const KEPT_LINES = 20;

export interface AgentProcessOptions {
  script: string;
  env: Record<string, string>;
  /** Called with each line the agent prints (for a verbose run); lines are kept either way. */
  onLine?: (line: string) => void;
}

/**
 * The reference agent as a child process. It runs in its own process group so a Ctrl-C in the terminal
 * reaches the demo only, which then stops the agent once (SIGTERM, SIGKILL after a grace period).
 */
export class AgentProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | string>;
  private readonly lines: string[] = [];
  private exit: number | string | undefined;

  constructor(options: AgentProcessOptions) {
    this.child = spawn(process.execPath, [options.script], {
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        this.lines.push(line);
        if (this.lines.length > KEPT_LINES) this.lines.shift();
        options.onLine?.(line);
      });
    }
    this.exited = new Promise((resolve) => {
      this.child.once('error', (error) => resolve((error as NodeJS.ErrnoException).code ?? 'spawn_error'));
      this.child.once('close', (code, signal) => resolve(code ?? signal ?? -1));
    });
    void this.exited.then((code) => (this.exit = code));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The exit code or signal once the process ended, else undefined. */
  get exitCode(): number | string | undefined {
    return this.exit;
  }

  /** The agent's last line of output that says something (for a one-line failure report). */
  lastLine(): string | undefined {
    for (let i = this.lines.length - 1; i >= 0; i -= 1) {
      const line = this.lines[i]?.trim();
      if (!line) continue;
      if (!line.startsWith('{')) return line;
      try {
        const entry = JSON.parse(line) as { msg?: unknown; err?: { message?: unknown } };
        const detail = typeof entry.err?.message === 'string' ? `: ${entry.err.message}` : '';
        return `${String(entry.msg ?? line)}${detail}`;
      } catch {
        return line;
      }
    }
    return undefined;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code or signal. */
  async stop(graceMs = 25_000): Promise<number | string> {
    if (this.exit !== undefined) return this.exit;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (this.exit === undefined) this.child.kill('SIGKILL');
    }, graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }

  /** Last resort when the demo itself exits: the agent does not outlive it. */
  kill(): void {
    if (this.exit === undefined && this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
    }
  }
}
