import { readdirSync, readFileSync } from 'node:fs';
import { spawn } from 'node-pty';
import type { IPty } from 'node-pty';
import type { Logger } from '@svc/service-kit';
import type { RawData, WebSocket } from 'ws';

/** Variables the shell inherits from the agent; everything else (the agent's token included) stays out. */
export const TERMINAL_ENV_ALLOW_LIST = ['PATH', 'HOME', 'LANG', 'SHELL'] as const;

export interface TerminalSettings {
  /** The shell to run (default `$SHELL` of `baseEnv`, else `/bin/sh`). */
  shell?: string | undefined;
  workdir: string;
  /** Where the allow-listed variables are read from (default the agent's own environment). */
  baseEnv?: NodeJS.ProcessEnv | undefined;
  /** After SIGHUP, how long the terminal's processes get before SIGKILL (default 2 s). */
  killGraceMs?: number | undefined;
  /** WebSocket ping period; a socket that has not answered the previous ping is terminated (default 30 s). */
  pingIntervalMs?: number | undefined;
}

export interface TerminalSize {
  cols: number;
  rows: number;
}

/** Above this many bytes queued on the socket, reading from the terminal pauses until the queue drains. */
const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 64 * 1024;
const MAX_DIMENSION = 1000;

/** The shell a terminal runs, and the environment it gets: a small allow-list plus `TERM`. */
export function terminalCommand(settings: TerminalSettings): { shell: string; env: Record<string, string> } {
  const base = settings.baseEnv ?? process.env;
  const shell = settings.shell || base.SHELL || '/bin/sh';
  const env: Record<string, string> = {};
  for (const name of TERMINAL_ENV_ALLOW_LIST) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  env.SHELL = shell;
  env.TERM = 'xterm-256color';
  return { shell, env };
}

/**
 * Processes of the terminal's session (its shell is the session leader, so the session id is the shell's pid).
 * Job-control shells put background jobs in process groups of their own, so the session, not the shell's
 * group, is what holds everything typed in the terminal. Read from /proc where it exists (Linux); elsewhere
 * only the shell's own process group is known.
 */
export function sessionProcesses(sid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces): state ppid pgrp session …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[3]) === sid) members.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return members;
}

/** True while the shell's process group or any process of its session is alive. */
function isAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return sessionProcesses(pid).some((member) => !isZombie(member));
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Signals the shell's process group and every process of its session. */
function signalSession(pid: number, signal: NodeJS.Signals): void {
  const targets = new Set([-pid, ...sessionProcesses(pid)]);
  for (const target of targets) {
    try {
      process.kill(target, signal);
    } catch {
      // Already gone.
    }
  }
}

function parseResize(text: string): TerminalSize | null {
  try {
    const value = JSON.parse(text) as { type?: unknown; cols?: unknown; rows?: unknown };
    const ok = (n: unknown): n is number =>
      typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= MAX_DIMENSION;
    return value?.type === 'resize' && ok(value.cols) && ok(value.rows)
      ? { cols: value.cols, rows: value.rows }
      : null;
  } catch {
    return null;
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/**
 * One terminal session: the shell on a pseudo-terminal in the workdir, joined to a WebSocket. Binary frames
 * are terminal bytes both ways; a text frame `{"type":"resize","cols":N,"rows":M}` resizes. The socket closing
 * (or missing a pong) ends the session: the shell's process group and every process of its session (background
 * jobs included) get SIGHUP, then SIGKILL after the grace.
 * The shell exiting closes the socket with 1000. `ended` resolves once the shell has exited and its process
 * group is gone (or was sent SIGKILL).
 */
export class TerminalSession {
  readonly pid: number;
  readonly ended: Promise<void>;
  private readonly pty: IPty;
  private exited = false;
  private closing = false;
  private paused = false;
  private awaitingPong = false;
  private readonly pinger: NodeJS.Timeout;
  private killTimer: NodeJS.Timeout | undefined;
  /** The grace after SIGHUP is over (SIGKILL sent if the group was still there). */
  private groupSignalled = false;
  private finish!: () => void;

  constructor(
    private readonly ws: WebSocket,
    settings: TerminalSettings,
    size: TerminalSize,
    private readonly logger: Logger,
  ) {
    this.ended = new Promise<void>((resolve) => {
      this.finish = resolve;
    });
    const { shell, env } = terminalCommand(settings);
    this.pty = spawn(shell, [], {
      name: 'xterm-256color',
      cols: size.cols,
      rows: size.rows,
      cwd: settings.workdir,
      env,
      // Raw bytes both ways: the socket carries the terminal's bytes unchanged.
      encoding: null,
    });
    this.pid = this.pty.pid;
    const killGraceMs = settings.killGraceMs ?? 2_000;
    logger.info({ pid: this.pid, shell, cols: size.cols, rows: size.rows }, 'terminal session started');

    this.pty.onData((data: string | Buffer) => this.toSocket(data));
    this.pty.onExit(({ exitCode, signal }) => {
      this.exited = true;
      logger.info({ pid: this.pid, exit_code: exitCode, signal }, 'terminal shell exited');
      if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000, 'the shell exited');
      this.maybeFinish();
    });

    ws.on('message', (data, isBinary) => this.fromSocket(data, isBinary));
    ws.on('pong', () => {
      this.awaitingPong = false;
    });
    ws.on('error', (error) => logger.warn({ pid: this.pid, err: error }, 'terminal socket error'));
    ws.on('close', () => this.hangUp(killGraceMs));

    const pingIntervalMs = settings.pingIntervalMs ?? 30_000;
    this.pinger = setInterval(() => {
      if (this.awaitingPong) {
        logger.info({ pid: this.pid }, 'terminal socket missed a pong; closing it');
        this.ws.terminate();
        return;
      }
      this.awaitingPong = true;
      this.ws.ping();
    }, pingIntervalMs);
  }

  /** Ends the session from the server's side (shutdown): the socket closes with 1001, the shell is hung up. */
  close(): Promise<void> {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) {
      this.ws.close(1001, 'the agent is stopping');
      // A peer that never answers the close handshake must not hold the session open.
      setTimeout(() => this.ws.terminate(), 1_000).unref();
    }
    return this.ended;
  }

  private toSocket(data: string | Buffer): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.ws.send(bytes, { binary: true }, () => {
      if (this.paused && this.ws.bufferedAmount < LOW_WATER_BYTES) {
        this.paused = false;
        this.pty.resume();
      }
    });
    if (!this.paused && this.ws.bufferedAmount > HIGH_WATER_BYTES) {
      this.paused = true;
      this.pty.pause();
    }
  }

  private fromSocket(data: RawData, isBinary: boolean): void {
    if (this.exited) return;
    const bytes = toBuffer(data);
    if (isBinary) {
      this.pty.write(bytes);
      return;
    }
    const size = parseResize(bytes.toString('utf8'));
    if (!size) {
      this.logger.debug({ pid: this.pid }, 'terminal text frame ignored (not a resize)');
      return;
    }
    this.pty.resize(size.cols, size.rows);
  }

  /** The socket is gone: SIGHUP the terminal's processes, SIGKILL what is left after the grace. */
  private hangUp(killGraceMs: number): void {
    if (this.closing) return;
    this.closing = true;
    clearInterval(this.pinger);
    if (this.paused) this.pty.resume();
    signalSession(this.pid, 'SIGHUP');
    this.killTimer = setTimeout(() => {
      if (isAlive(this.pid)) {
        this.logger.info({ pid: this.pid }, 'terminal processes outlived SIGHUP; sending SIGKILL');
        signalSession(this.pid, 'SIGKILL');
      }
      this.groupSignalled = true;
      this.maybeFinish();
    }, killGraceMs);
    this.maybeFinish();
  }

  /** Done once the shell has exited, the socket is closed and the terminal's processes are gone (or killed). */
  private maybeFinish(): void {
    if (!this.exited || !this.closing) return;
    if (!this.groupSignalled && isAlive(this.pid)) return;
    clearTimeout(this.killTimer);
    this.finish();
  }
}
