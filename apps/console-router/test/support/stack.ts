import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { deriveConsoleProxyKey } from '@svc/auth';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import {
  APP_DIRS,
  createHubDatabase,
  createHubWorkspace,
  eventually,
  freePort,
  newServiceToken,
  registerLiveRuntimeHost,
  startBuiltEntryPoint,
  startHub,
} from '@svc/testing';
import type { HubOwner, LiveRuntimeHost, NodeProcess, RunningHub, TestDatabase } from '@svc/testing';
import { createConsoleRouterService } from '../../src/app';
import type { ConsoleRouterService } from '../../src/app';
import { loadConsoleRouterConfig } from '../../src/env';
import { isListening } from '../../src/transport/agent-probe';

/** A workspace of the stack: its signed-in owner, a project, a live runtime host and the host's runtime key. */
export interface StackWorkspace {
  owner: HubOwner;
  projectCode: string;
  /** A second project: agents on it share nothing with those on the first. */
  loneProjectCode: string;
  host: LiveRuntimeHost;
  runtimeKey: string;
}

export interface RegisteredAgent {
  id: string;
  token: string;
  servePort: number;
}

export interface InProcessRouter {
  url: string;
  router: ConsoleRouterService;
  server: RunningServer;
  logs(): string;
  close(): Promise<void>;
}

/** A random console secret, as a host keeps one. */
export const newConsoleSecret = () => randomBytes(32).toString('base64url');

async function hubCall<T>(
  hubUrl: string,
  method: string,
  route: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<T> {
  const res = await fetch(`${hubUrl}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: HTTP ${res.status} ${text}`);
  return (text ? (JSON.parse(text) as { data: T }).data : undefined) as T;
}

/**
 * The real hub (its build, on a fresh database) with two workspaces, each with a live runtime host, a
 * project and the host's runtime key; agents are registered with a serve port and started at the hub, and
 * served by the built reference agent or by any local server standing for one.
 */
export class ConsoleStack {
  readonly secret = newConsoleSecret();
  private readonly processes: NodeProcess[] = [];
  private readonly routers: InProcessRouter[] = [];

  private constructor(
    readonly database: TestDatabase,
    readonly hub: RunningHub,
    readonly home: StackWorkspace,
    readonly other: StackWorkspace,
  ) {}

  /** `hubEnv`: more variables for the hub (its Redis, for route announcements). */
  static async start(options: { hubEnv?: Record<string, string> } = {}): Promise<ConsoleStack> {
    const database = await createHubDatabase();
    const hub = await startHub({
      databaseUrl: database.url,
      serviceToken: newServiceToken(),
      ...(options.hubEnv ? { env: options.hubEnv } : {}),
    });
    const suffix = randomBytes(3).toString('hex');
    const workspace = async (slug: string): Promise<StackWorkspace> => {
      const owner = await createHubWorkspace({
        hubUrl: hub.url,
        databaseUrl: database.url,
        slug,
        email: `owner@${slug}.test`,
      });
      const auth = { authorization: `Bearer ${owner.token}` };
      await hubCall(
        hub.url,
        'PUT',
        `/api/v1/workspaces/${slug}/provider-credentials/local`,
        { secret: `local-${randomBytes(12).toString('hex')}` },
        auth,
      );
      const projectCode = 'CONSOLE';
      await owner.createProject(projectCode);
      const loneProjectCode = 'LONE';
      await owner.createProject(loneProjectCode);
      const host = await registerLiveRuntimeHost(owner, `${slug}-host`);
      const runtimeKey = await owner.createApiKey(['runtime-config:read'], `${slug} console router`);
      return { owner, projectCode, loneProjectCode, host, runtimeKey };
    };
    const home = await workspace(`home-${suffix}`);
    const other = await workspace(`other-${suffix}`);
    return new ConsoleStack(database, hub, home, other);
  }

  /**
   * Registers an agent on the workspace's host with a free serve port and starts it at the hub (unless
   * `start: false`: the token is then empty until {@link startAgent}).
   */
  async registerAgent(
    ws: StackWorkspace,
    name: string,
    options: { servePort?: number; projectCode?: string; start?: boolean } = {},
  ): Promise<RegisteredAgent> {
    const servePort = options.servePort;
    const port = servePort ?? (await freePort());
    const auth = { authorization: `Bearer ${ws.owner.token}` };
    const agent = await hubCall<{ id: string }>(
      this.hub.url,
      'POST',
      `/api/v1/workspaces/${ws.owner.workspace.slug}/agents`,
      {
        name,
        runtime_instance_id: ws.host.id,
        capabilities: ['code'],
        project_code: options.projectCode ?? ws.projectCode,
        model: 'local/echo',
        serve_port: port,
      },
      auth,
    );
    if (options.start === false) return { id: agent.id, token: '', servePort: port };
    const token = await this.startAgent(ws, agent.id);
    return { id: agent.id, token, servePort: port };
  }

  /** Starts a registered agent at the hub (a direct start); its AGENT_TOKEN. */
  async startAgent(ws: StackWorkspace, agentId: string): Promise<string> {
    const started = await hubCall<{ agent_token: string }>(
      this.hub.url,
      'POST',
      `/api/v1/agents/${agentId}/start`,
      { launch_path: 'direct' },
      { authorization: `Bearer ${ws.owner.token}` },
    );
    return started.agent_token;
  }

  /** Stops (`stop`) or evicts (`evict`) an agent at the hub, as its owner. */
  async agentAction(ws: StackWorkspace, agentId: string, action: 'stop' | 'evict'): Promise<void> {
    await hubCall(this.hub.url, 'POST', `/api/v1/agents/${agentId}/${action}`, undefined, {
      authorization: `Bearer ${ws.owner.token}`,
    });
  }

  /** Puts agents in one team of their workspace (they become peers). */
  async team(ws: StackWorkspace, agents: RegisteredAgent[]): Promise<void> {
    const auth = { authorization: `Bearer ${ws.owner.token}` };
    const team = await hubCall<{ id: string }>(
      this.hub.url,
      'POST',
      `/api/v1/workspaces/${ws.owner.workspace.slug}/teams`,
      { name: `team-${randomBytes(3).toString('hex')}` },
      auth,
    );
    for (const agent of agents) {
      await hubCall(this.hub.url, 'PUT', `/api/v1/teams/${team.id}/agents/${agent.id}`, undefined, auth);
    }
  }

  /** Adds a member to `ws` and signs them in: their participant id and token. */
  async addMember(ws: StackWorkspace, email: string): Promise<{ participantId: string; token: string }> {
    const auth = { authorization: `Bearer ${ws.owner.token}` };
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const member = await hubCall<{ participant: { id: string } }>(
      this.hub.url,
      'POST',
      `/api/v1/workspaces/${ws.owner.workspace.slug}/members`,
      { email, role: 'member', password },
      auth,
    );
    const session = await hubCall<{ token: string }>(
      this.hub.url,
      'POST',
      '/api/v1/auth/login',
      { email, password },
      {},
    );
    return { participantId: member.participant.id, token: session.token };
  }

  /** Removes a member from `ws`. */
  async removeMember(ws: StackWorkspace, participantId: string): Promise<void> {
    await hubCall(
      this.hub.url,
      'DELETE',
      `/api/v1/workspaces/${ws.owner.workspace.slug}/members/${participantId}`,
      undefined,
      { authorization: `Bearer ${ws.owner.token}` },
    );
  }

  /** A console ticket for `token`'s participant on `agentId`. */
  async ticketFor(token: string, agentId: string): Promise<string> {
    const issued = await hubCall<{ ticket: string }>(
      this.hub.url,
      'POST',
      `/api/v1/agents/${agentId}/console-tickets`,
      undefined,
      { authorization: `Bearer ${token}` },
    );
    return issued.ticket;
  }

  /** A console ticket for the owner of `ws` on `agentId`. */
  ticket(ws: StackWorkspace, agentId: string): Promise<string> {
    return this.ticketFor(ws.owner.token, agentId);
  }

  /** Runs the built reference agent serving its console on the agent's serve port, ready to connect. */
  async startReferenceAgent(agent: RegisteredAgent): Promise<NodeProcess> {
    const proc = startBuiltEntryPoint(
      APP_DIRS.referenceAgent,
      'dist/main.js',
      {
        AGENT_TOKEN: agent.token,
        HUB_URL: this.hub.url,
        // No Workflow API in this stack: the agent's poll loop retries in the background, the console serves.
        WORKFLOW_URL: 'http://127.0.0.1:9',
        AGENT_POLL_WAIT_SECONDS: '1',
        AGENT_SERVE_PORT: String(agent.servePort),
        AGENT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), 'console-router-agent-')),
        AGENT_CONSOLE_PROXY_KEY: deriveConsoleProxyKey(this.secret, agent.id),
        LOG_LEVEL: 'warn',
        SHELL: '/bin/sh',
        HOME: os.tmpdir(),
      },
      { name: `reference agent ${agent.id}`, outputLimit: 20_000 },
    );
    this.processes.push(proc);
    // Done waiting when it serves its console, or when it exited.
    const serving = await eventually(
      async () => !proc.running() || (await isListening(agent.servePort, 200)),
      10_000,
      `${proc.name} to serve its console`,
      { intervalMs: 50 },
    ).catch(() => false);
    if (!proc.running()) throw new Error(`${proc.name} exited:\n${proc.output()}`);
    if (serving) return proc;
    await proc.stop('SIGKILL');
    throw new Error(`${proc.name} did not serve its console within 10 s:\n${proc.output()}`);
  }

  /** The router's environment for the workspace's host. */
  routerEnv(ws: StackWorkspace, extra: Record<string, string> = {}): Record<string, string> {
    return {
      HUB_URL: this.hub.url,
      SVC_RUNTIME_INSTANCE_ID: ws.host.id,
      SVC_WORKSPACE_API_KEY: ws.runtimeKey,
      CONSOLE_ROUTER_UPSTREAM_SECRET: this.secret,
      CONSOLE_ROUTER_PUBLIC_BASE_URL: 'https://console.example.test',
      CONSOLE_ROUTER_POLL_MS: '60000',
      ...extra,
    };
  }

  /** The console router built in process for the workspace's host, on 127.0.0.1:0, its table loaded. */
  async startRouter(ws: StackWorkspace, extra: Record<string, string> = {}): Promise<InProcessRouter> {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const config = loadConsoleRouterConfig({ ...this.routerEnv(ws, extra), CONSOLE_ROUTER_PORT: '0' });
    const logger = createLogger({ name: 'console-router', level: 'debug', destination });
    const router = createConsoleRouterService({ config, logger, validateResponses: true });
    const server = await startHttpServer(router.app, { host: config.host, port: config.port, logger });
    router.attach(server.server);
    await router.routes.refresh();
    router.start();
    const running: InProcessRouter = {
      url: server.url,
      router,
      server,
      logs: () => lines.join(''),
      close: async () => {
        router.close();
        await server.close(0);
      },
    };
    this.routers.push(running);
    return running;
  }

  async close(): Promise<void> {
    await Promise.all(this.routers.splice(0).map((r) => r.close()));
    await Promise.all(this.processes.splice(0).map((p) => p.stop('SIGKILL')));
    this.home.host.stop();
    this.other.host.stop();
    await this.hub.process.stop();
    await this.database.drop();
  }
}
