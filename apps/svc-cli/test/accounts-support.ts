import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
// @svc/testing is not a dependency of this package yet; its sources are used directly.
import {
  bootstrapHubWorkspace,
  createHubDatabase,
  freePort,
  newServiceToken,
  signInHubOwner,
  startHub,
} from '../../../packages/testing/src';
import type { HubOwner, RunningHub, TestDatabase } from '../../../packages/testing/src';

export const appDir = path.resolve(__dirname, '..');
const bin = path.join(appDir, 'bin', 'run.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`node bin/run.js …`) as a real process; stdin is a pipe (never a terminal). */
export function runSvc(
  args: string[],
  options: { env?: Record<string, string | undefined>; stdin?: string; home: string },
): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: options.home, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('SVC_') || key === 'DEBUG') delete env[key];
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: appDir,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

/** The one JSON document a `--json` run printed (fails the test when stdout is anything else). */
export function jsonOf(result: CliResult): {
  ok: boolean;
  result?: Record<string, unknown>;
  error?: Record<string, unknown> & { code: string; exit_code: number; fix: string | null; message: string };
} {
  return JSON.parse(result.stdout) as never;
}

export const modeOf = (file: string) => fs.statSync(file).mode & 0o777;

/** A built-CLI check: the tests run dist/, exactly as installed. */
export function assertBuilt(): void {
  if (!fs.existsSync(path.join(appDir, 'dist', 'commands', 'login.js'))) {
    throw new Error(
      'apps/svc-cli/dist is missing the accounts commands: run `pnpm --filter @svc/cli build` first',
    );
  }
}

export interface AccountsHost {
  id: string;
  workdirRoot: string;
  relayPort: number;
  consoleRouterPort: number;
  /** A `runtime-hosts:write` key to heartbeat the host as a runtime would. */
  heartbeatKey: string;
}

/**
 * The real hub (its build, on a fresh database) with a workspace whose owner's password the test knows, a
 * project and a runtime host on free local ports (nothing listens there until a test starts something).
 */
export class AccountsStack {
  private timers: NodeJS.Timeout[] = [];

  private constructor(
    readonly database: TestDatabase,
    readonly hub: RunningHub,
    readonly owner: HubOwner,
    readonly email: string,
    readonly password: string,
    readonly projectCode: string,
  ) {}

  static async start(slug: string): Promise<AccountsStack> {
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
    const projectCode = 'ACCT';
    await owner.createProject(projectCode);
    return new AccountsStack(database, hub, owner, email, password, projectCode);
  }

  get hubUrl(): string {
    return this.hub.url;
  }

  get slug(): string {
    return this.owner.workspace.slug;
  }

  async registerHost(name: string, workdirRoot = '/srv/agents'): Promise<AccountsHost> {
    const [relayPort, consoleRouterPort] = [await freePort(), await freePort()];
    const registered = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: { path: { workspace: this.slug } },
        body: {
          name,
          workdir_root: workdirRoot,
          console_public_base_url: `http://127.0.0.1:${consoleRouterPort}`,
          console_router: { bind_host: '127.0.0.1', listen_port: consoleRouterPort },
          relay: { bind_host: '127.0.0.1', listen_port: relayPort },
        },
      }),
    );
    const heartbeatKey = await this.owner.createApiKey(['runtime-hosts:write'], `${name} heartbeat`);
    return { id: registered.host.id, workdirRoot, relayPort, consoleRouterPort, heartbeatKey };
  }

  /** Sends one host heartbeat now and then every 10 s, as `svc runtime up` does. */
  async keepHeartbeating(host: AccountsHost): Promise<void> {
    const beat = async () => {
      const res = await fetch(`${this.hubUrl}/api/v1/runtime-hosts/${host.id}/heartbeat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': host.heartbeatKey },
        body: JSON.stringify({ relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`host heartbeat: HTTP ${res.status}`);
    };
    await beat();
    const timer = setInterval(() => void beat().catch(() => undefined), 10_000);
    timer.unref();
    this.timers.push(timer);
  }

  /** Registers an agent on the host and starts it at the hub (direct launch): its real AGENT_TOKEN. */
  async startAgent(name: string, hostId: string) {
    const registered = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: this.slug } },
        body: {
          name,
          runtime_instance_id: hostId,
          capabilities: ['review'],
          project_code: this.projectCode,
          model: 'local/echo',
        } as never,
      }),
    ) as { id?: string; agent?: { id: string } };
    const id = (registered.agent?.id ?? registered.id) as string;
    const started = unwrap(
      await this.owner.hub.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId: id } },
        body: { launch_path: 'direct' },
      }),
    );
    return { id, started };
  }

  participantHub(): HubClient {
    return createHubClient({ baseUrl: this.hubUrl, token: this.owner.token });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    await this.hub.process.stop();
    await this.database.drop();
  }
}

export function tempHome(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
