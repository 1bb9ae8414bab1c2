import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
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
import { ProfileStore } from '../src/data/profile-store';
import { resolveConfigPaths } from '../src/domain/config-paths';
import type { ConfigPaths } from '../src/domain/config-paths';

export const appDir = path.resolve(__dirname, '..');
const bin = path.join(appDir, 'bin', 'run.js');
export const referenceAgentMain = path.resolve(appDir, '..', 'reference-agent', 'dist', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

function cliEnv(home: string, env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' };
  for (const key of Object.keys(out))
    if (key.startsWith('SVC_') || key === 'DEBUG' || key === 'XDG_CONFIG_HOME') delete out[key];
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
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: appDir,
      env: cliEnv(home, env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
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

export type RuntimeConfig = HubApi.components['schemas']['RuntimeConfig'];

/**
 * The real hub (its build, on a fresh database) with a workspace, a project and a runtime host on free local
 * ports; the host's runtime config pulled by the owner and stored in a profile exactly as `svc config
 * pull-runtime` stores it (ProfileStore), so `svc runtime up` can run against it.
 */
export class RuntimeStack {
  private constructor(
    readonly database: TestDatabase,
    readonly hub: RunningHub,
    readonly owner: HubOwner,
    readonly projectCode: string,
  ) {}

  static async start(slug: string): Promise<RuntimeStack> {
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
    await owner.createProject('RT');
    return new RuntimeStack(database, hub, owner, 'RT');
  }

  get slug(): string {
    return this.owner.workspace.slug;
  }

  async registerHost(name: string): Promise<{ id: string; relayPort: number; routerPort: number }> {
    const [relayPort, routerPort] = [await freePort(), await freePort()];
    const registered = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: { path: { workspace: this.slug } },
        body: {
          name,
          workdir_root: os.tmpdir(),
          console_public_base_url: `http://127.0.0.1:${routerPort}`,
          console_router: { bind_host: '127.0.0.1', listen_port: routerPort },
          relay: { bind_host: '127.0.0.1', listen_port: relayPort },
        },
      }),
    );
    return { id: registered.host.id, relayPort, routerPort };
  }

  /** Pulls the host's runtime config as the owner (a fresh agent-runtime key) and writes the profile's files. */
  async writeProfile(paths: ConfigPaths, hostId: string): Promise<RuntimeConfig> {
    const config = unwrap(
      await this.owner.hub.GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
        params: { path: { workspace: this.slug }, query: { runtime_instance_id: hostId } },
      }),
    );
    const store = new ProfileStore(paths);
    const { auth, ...rest } = config;
    await store.write({
      hub_url: this.hub.url,
      workspace: this.slug,
      participant: {
        email: `owner@${this.slug}.test`,
        participant_id: 'unused',
        token: this.owner.token,
        expires_at: new Date(Date.now() + 3_600_000).toISOString(),
      },
      runtime: { ...rest, pulled_at: new Date().toISOString() },
    });
    await store.writeRuntimeSecrets({
      SVC_RELAY_TOKEN: auth.relay_token,
      SVC_WORKSPACE_API_KEY: auth.workspace_api_key,
    });
    return config;
  }

  /** Registers an agent on the host (model local/echo, optional serve port) and starts it at the hub. */
  async startAgent(name: string, hostId: string, servePort?: number): Promise<{ id: string; token: string }> {
    const registered = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: this.slug } },
        body: {
          name,
          runtime_instance_id: hostId,
          capabilities: ['review'],
          project_code: this.projectCode,
          model: 'local/echo',
          ...(servePort ? { serve_port: servePort } : {}),
        } as never,
      }),
    ) as { id: string };
    const started = unwrap(
      await this.owner.hub.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId: registered.id } },
        body: { launch_path: 'direct' },
      }),
    );
    return { id: registered.id, token: started.agent_token };
  }

  async agentStatus(id: string): Promise<string> {
    const agent = unwrap(
      await this.owner.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: id } } }),
    );
    return (agent as { status: string }).status;
  }

  async host(id: string) {
    return unwrap(
      await this.owner.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: id } } }),
    );
  }

  async close(): Promise<void> {
    await this.hub.process.stop();
    await this.database.drop();
  }
}

export function tempHome(prefix: string): { home: string; paths: ConfigPaths } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    home,
    paths: resolveConfigPaths({ configDir: path.join(home, '.config', 'svc'), profile: 'default' }),
  };
}
