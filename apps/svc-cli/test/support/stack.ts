import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import {
  bootstrapHubWorkspace,
  createHubDatabase,
  freePort,
  newServiceToken,
  signInHubOwner,
  startHub,
} from '@svc/testing';
import type { HubOwner, RunningHub, TestDatabase } from '@svc/testing';
import { ProfileStore } from '../../src/data/profile-store';
import { resolveConfigPaths } from '../../src/domain/config-paths';
import type { ConfigPaths } from '../../src/domain/config-paths';
import { tempHome } from './cli';

export type AuditEvent = HubApi.components['schemas']['AuditEvent'];
export type HubAgent = HubApi.components['schemas']['Agent'];
export type RuntimeConfig = HubApi.components['schemas']['RuntimeConfig'];

/** A runtime host registered at the hub, on free local ports (nothing listens there until a test starts something). */
export interface StackHost {
  id: string;
  name: string;
  workdirRoot: string;
  relayPort: number;
  routerPort: number;
  consoleBaseUrl: string;
}

/** A fresh, real (resolved) temporary directory for a host's agent workdirs. */
export function freshWorkdirRoot(prefix = 'svc-agents-root-'): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** A fresh HOME with the config paths of its default profile (`~/.config/svc`). */
export function tempProfile(prefix: string): { home: string; paths: ConfigPaths } {
  const home = tempHome(prefix);
  return {
    home,
    paths: resolveConfigPaths({ configDir: path.join(home, '.config', 'svc'), profile: 'default' }),
  };
}

/**
 * The real hub (its build, on a fresh database, the `local` provider hub-managed) with a workspace whose
 * owner's password the test knows, and optionally a project that agents are registered in.
 */
export class HubStack {
  private timers: NodeJS.Timeout[] = [];
  private heartbeatKeys = new Map<string, string>();

  private constructor(
    readonly database: TestDatabase,
    readonly hub: RunningHub,
    readonly owner: HubOwner,
    readonly email: string,
    readonly password: string,
    private readonly project: string | undefined,
  ) {}

  static async start(
    slug: string,
    options: { projectCode?: string; hubEnv?: Record<string, string> } = {},
  ): Promise<HubStack> {
    const database = await createHubDatabase();
    const hub = await startHub({
      databaseUrl: database.url,
      serviceToken: newServiceToken(),
      env: { HUB_MANAGED_PROVIDERS: 'local', ...options.hubEnv },
    });
    const email = `owner@${slug}.test`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const workspace = await bootstrapHubWorkspace({ databaseUrl: database.url, slug, email, password });
    const owner = await signInHubOwner(hub.url, workspace, email, password);
    if (options.projectCode) await owner.createProject(options.projectCode);
    return new HubStack(database, hub, owner, email, password, options.projectCode);
  }

  get hubUrl(): string {
    return this.hub.url;
  }

  get slug(): string {
    return this.owner.workspace.slug;
  }

  /** The project created at start (the one `startAgent` registers agents in). */
  get projectCode(): string {
    if (!this.project) throw new Error('this stack was started without a project');
    return this.project;
  }

  /** A hub client with the owner's participant token. */
  get participant(): HubClient {
    return createHubClient({ baseUrl: this.hubUrl, token: this.owner.token });
  }

  /** `login --hub-url … --workspace … --email … --password-stdin` for the owner, then `extra`. */
  loginArgs(...extra: string[]): string[] {
    return [
      'login',
      '--hub-url',
      this.hubUrl,
      '--workspace',
      this.slug,
      '--email',
      this.email,
      '--password-stdin',
      ...extra,
    ];
  }

  async registerHost(name: string, workdirRoot: string = freshWorkdirRoot()): Promise<StackHost> {
    const [relayPort, routerPort] = [await freePort(), await freePort()];
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
    return { id: registered.host.id, name, workdirRoot, relayPort, routerPort, consoleBaseUrl };
  }

  /**
   * Sends one host heartbeat now and then every 10 s, as `svc runtime up` does, with a `runtime-hosts:write`
   * key of its own.
   */
  async keepHeartbeating(host: StackHost): Promise<void> {
    let key = this.heartbeatKeys.get(host.id);
    if (!key) {
      key = await this.owner.createApiKey(['runtime-hosts:write'], `${host.name} heartbeat`);
      this.heartbeatKeys.set(host.id, key);
    }
    const heartbeatKey = key;
    const beat = async () => {
      const res = await fetch(`${this.hubUrl}/api/v1/runtime-hosts/${host.id}/heartbeat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': heartbeatKey },
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

  /**
   * Rotates the host's runtime key as the owner (a fresh agent-runtime key) and writes the profile's files
   * exactly as `svc config pull-runtime` stores them (ProfileStore), so `svc runtime up` can run against it.
   */
  async writeProfile(paths: ConfigPaths, hostId: string): Promise<RuntimeConfig> {
    const config = unwrap(
      await this.owner.hub.POST('/api/v1/workspaces/{workspace}/infrastructure/runtime-config/rotate', {
        params: { path: { workspace: this.slug } },
        body: { runtime_instance_id: hostId },
      }),
    );
    const store = new ProfileStore(paths);
    const { auth, runtime_key: _key, ...rest } = config;
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
      SVC_WORKSPACE_API_KEY: auth.workspace_api_key ?? undefined,
    });
    return config;
  }

  /**
   * Registers an agent on the host in the stack's project (model local/echo, optional serve port) and starts
   * it at the hub (direct launch): its id, its real AGENT_TOKEN and the whole start answer.
   */
  async startAgent(name: string, hostId: string, servePort?: number) {
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
    ) as { id?: string; agent?: { id: string } };
    const id = (registered.agent?.id ?? registered.id) as string;
    const started = unwrap(
      await this.owner.hub.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId: id } },
        body: { launch_path: 'direct' },
      }),
    );
    return { id, token: started.agent_token, started };
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

  async agentStatus(id: string): Promise<string> {
    return (await this.agent(id)).status;
  }

  async host(id: string) {
    return unwrap(
      await this.owner.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: id } } }),
    );
  }

  async spawnReady(hostId: string): Promise<boolean> {
    return (await this.host(hostId)).readiness.spawn_ready;
  }

  async runningCount(hostId: string): Promise<number> {
    const view = unwrap(
      await this.owner.hub.GET('/api/v1/workspaces/{workspace}/networks', {
        params: { path: { workspace: this.slug } },
      }),
    );
    return view.hosts.find((h) => h.runtime_instance_id === hostId)?.running_agents ?? -1;
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
    for (const timer of this.timers) clearInterval(timer);
    await this.hub.process.stop();
    await this.database.drop();
  }
}
