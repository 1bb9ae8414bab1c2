import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
// @svc/testing is not a dependency of this package; its sources are used directly.
import {
  bootstrapHubWorkspace,
  createHubDatabase,
  freePort,
  newServiceToken,
  signInHubOwner,
  sleep,
  startHub,
} from '../../../packages/testing/src';
import type { HubOwner, RunningHub, TestDatabase } from '../../../packages/testing/src';

export const appDir = path.resolve(__dirname, '..');
const bin = path.join(appDir, 'bin', 'run.js');

export type AuditEvent = HubApi.components['schemas']['AuditEvent'];
export type HubAgent = HubApi.components['schemas']['Agent'];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: a throw-away HOME, no SVC_ variable of the machine, then `env`. */
function cliEnv(home: string, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
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

/** Runs the built CLI (`node bin/run.js …`) to completion as a real process. */
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

/** The one JSON document a `--json` run printed (the test fails when stdout is anything else). */
export function jsonOf(result: CliResult): {
  ok: boolean;
  result?: unknown;
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

/** Polls `check` until it returns a value (not undefined) or the ceiling passes; fails with `describe()`. */
export async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  describe: () => string = () => '',
  ceilingMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + ceilingMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not within ${ceilingMs / 1000} s${last ? ` (last error: ${String(last)})` : ''}\n${describe()}`,
      );
    }
    await sleep(250);
  }
}

export const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface AgentsHost {
  id: string;
  workdirRoot: string;
  routerPort: number;
  relayPort: number;
  consoleBaseUrl: string;
}

/**
 * The real hub (its build, on a fresh database, `local` provider hub-managed) with a workspace whose owner's
 * password the test knows, two projects and one runtime host whose workdir root is a fresh temporary directory.
 */
export class AgentsStack {
  private constructor(
    readonly database: TestDatabase,
    readonly hub: RunningHub,
    readonly owner: HubOwner,
    readonly email: string,
    readonly password: string,
  ) {}

  static async start(slug: string): Promise<AgentsStack> {
    const database = await createHubDatabase();
    const hub = await startHub({
      databaseUrl: database.url,
      serviceToken: newServiceToken(),
      env: { HUB_MANAGED_PROVIDERS: 'local' },
    });
    const email = `owner@${slug}.test`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const workspace = await bootstrapHubWorkspace({ databaseUrl: database.url, slug, email, password });
    const owner = await signInHubOwner(hub.url, workspace, email, password);
    return new AgentsStack(database, hub, owner, email, password);
  }

  get hubUrl(): string {
    return this.hub.url;
  }

  get slug(): string {
    return this.owner.workspace.slug;
  }

  get participant(): HubClient {
    return createHubClient({ baseUrl: this.hubUrl, token: this.owner.token });
  }

  async registerHost(name: string): Promise<AgentsHost> {
    const [relayPort, routerPort] = [await freePort(), await freePort()];
    const workdirRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'svc-agents-root-')));
    const consoleBaseUrl = `http://127.0.0.1:${routerPort}`;
    const registered = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: { path: { workspace: this.slug } },
        body: {
          name,
          workdir_root: workdirRoot,
          console_public_base_url: consoleBaseUrl,
          console_router: { bind_host: '127.0.0.1', listen_port: routerPort },
          relay: { bind_host: '127.0.0.1', listen_port: relayPort },
        },
      }),
    );
    return { id: registered.host.id, workdirRoot, routerPort, relayPort, consoleBaseUrl };
  }

  async createTeam(name: string): Promise<string> {
    const team = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/teams', {
        params: { path: { workspace: this.slug } },
        body: { name },
      }),
    );
    return team.id;
  }

  async agents(): Promise<HubAgent[]> {
    return unwrap(
      await this.owner.hub.GET('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: this.slug } },
      }),
    );
  }

  async agent(id: string): Promise<HubAgent> {
    return unwrap(
      await this.owner.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: id } } }),
    );
  }

  async runningCount(hostId: string): Promise<number> {
    const view = unwrap(
      await this.owner.hub.GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: this.slug } },
      }),
    );
    return view.hosts.find((h) => h.runtime_instance_id === hostId)?.running_agents ?? -1;
  }

  async spawnReady(hostId: string): Promise<boolean> {
    const host = unwrap(
      await this.owner.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId } } }),
    );
    return host.readiness.spawn_ready;
  }

  /** Every audit event of the workspace (all pages), newest first, optionally filtered. */
  async audit(query: { action?: string; target_id?: string } = {}): Promise<AuditEvent[]> {
    const out: AuditEvent[] = [];
    let cursor: string | undefined;
    for (;;) {
      const res = await this.owner.hub.GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: {
          path: { workspace: this.slug },
          query: { ...query, limit: 200, ...(cursor ? { cursor } : {}) },
        },
      });
      if (!res.data) throw new Error(`audit: HTTP ${res.response.status}`);
      const page = res.data as unknown as { data: AuditEvent[]; next_cursor: string | null };
      out.push(...page.data);
      if (!page.next_cursor) return out;
      cursor = page.next_cursor;
    }
  }

  async close(): Promise<void> {
    await this.hub.process.stop();
    await this.database.drop();
  }
}

export function tempHome(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
