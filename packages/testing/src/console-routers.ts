/**
 * Console routers for a run stack: a runtime host of the stack's workspace with one agent console (the built
 * reference agent serving on its port) and N console router processes (their build) for that host, behind
 * HAProxy when there are several (the `console` service of `infra/load-balancer`). A caller reaches the agent's
 * console `/global/health` through them, as a browser does through the public console URL.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deriveConsoleProxyKey } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { startLoadBalancer } from './load-balancer';
import type { RunningLoadBalancer } from './load-balancer';
import { APP_DIRS } from './platform';
import type { HubOwner } from './platform';
import { eventually, freePort, startBuiltEntryPoint, waitUntilReady } from './process';
import type { NodeProcess } from './process';
import { startReferenceAgent, startRuntimeHostProcess } from './runtime';

export interface ConsoleRouters {
  /** Where callers reach the routers (the balancer's URL with several, else the only router's). */
  url: string;
  /** The agent console's health route through the routers (a path under `url`). */
  healthPath: string;
  /** A bearer token the routers admit for that console (the workspace owner's). */
  token: string;
  replicas: { process: NodeProcess; url: string }[];
  loadBalancer: RunningLoadBalancer | null;
  /** Kills router `index` (SIGKILL by default) and, unless `restart: false`, starts it again on its port. */
  killReplica(index: number, options?: { signal?: NodeJS.Signals; restart?: boolean }): Promise<void>;
  close(): Promise<void>;
}

/**
 * Registers a runtime host (heartbeating from a process of its own) and an agent on it with a console, starts
 * the reference agent serving that console and `replicas` routers for the host, and waits until the console's
 * health answers 200 through them.
 */
export async function startConsoleRouters(options: {
  owner: HubOwner;
  /** The hub the routers read route tables and signing keys from (the stack's, balanced or not). */
  hubUrl: string;
  /** The Workflow API the agent polls (it has no stage to do: its capability is `console`). */
  workflowUrl: string;
  projectCode: string;
  replicas?: number;
  /** How often each router reloads the host's route table (default 2 s). */
  pollMs?: number;
}): Promise<ConsoleRouters> {
  const { owner } = options;
  const count = Math.max(1, options.replicas ?? 1);
  const secret = randomBytes(32).toString('base64url');
  const host = await startRuntimeHostProcess(owner, `console-host-${randomBytes(3).toString('hex')}`);
  const runtimeKey = await owner.createApiKey(['runtime-config:read'], 'console routers');
  const servePort = await freePort();
  const registered = unwrap(
    await owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug } },
      body: {
        name: `console-${randomBytes(3).toString('hex')}`,
        runtime_instance_id: host.id,
        capabilities: ['console'],
        project_code: options.projectCode,
        model: 'local/echo',
        serve_port: servePort,
      } as never,
    }),
  ) as { id?: string; agent?: { id: string } };
  const agentId = (registered.agent?.id ?? registered.id) as string;
  const started = unwrap(
    await owner.hub.POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId } },
      body: { launch_path: 'direct' },
    }),
  );
  const agent = await startReferenceAgent(
    owner,
    { id: agentId, token: started.agent_token },
    {
      workflowUrl: options.workflowUrl,
      env: {
        AGENT_POLL_WAIT_SECONDS: '10',
        AGENT_SERVE_PORT: String(servePort),
        AGENT_WORKDIR: mkdtempSync(path.join(os.tmpdir(), 'svc-console-agent-')),
        AGENT_CONSOLE_PROXY_KEY: deriveConsoleProxyKey(secret, agentId),
        LOG_LEVEL: 'warn',
        SHELL: '/bin/sh',
        HOME: os.tmpdir(),
      },
      process: { outputLimit: 20_000 },
    },
  );

  const env = (port: number): Record<string, string> => ({
    HUB_URL: options.hubUrl,
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_WORKSPACE_API_KEY: runtimeKey,
    CONSOLE_ROUTER_UPSTREAM_SECRET: secret,
    CONSOLE_ROUTER_PUBLIC_BASE_URL: 'https://console.example.test',
    CONSOLE_ROUTER_POLL_MS: String(options.pollMs ?? 2_000),
    CONSOLE_ROUTER_PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  const startRouter = async (port: number): Promise<NodeProcess> => {
    const proc = startBuiltEntryPoint(APP_DIRS.consoleRouter, 'dist/main.js', env(port), {
      name: `console router :${port}`,
      outputLimit: 20_000,
    });
    await waitUntilReady(proc, `http://127.0.0.1:${port}`);
    return proc;
  };
  const replicas: { process: NodeProcess; url: string }[] = [];
  for (let i = 0; i < count; i += 1) {
    const port = await freePort();
    replicas.push({ process: await startRouter(port), url: `http://127.0.0.1:${port}` });
  }
  const loadBalancer =
    count > 1
      ? await startLoadBalancer([
          {
            name: 'console',
            bind: `127.0.0.1:${await freePort()}`,
            servers: replicas.map((r) => new URL(r.url).host),
          },
        ])
      : null;
  const url = loadBalancer ? loadBalancer.urls.console! : replicas[0]!.url;
  const healthPath = `/${owner.workspace.slug}/agents/${agentId}/global/health`;
  let last = 'no answer';
  await eventually(
    async () => {
      const res = await fetch(`${url}${healthPath}`, {
        headers: { authorization: `Bearer ${owner.token}` },
        signal: AbortSignal.timeout(2_000),
      }).catch(() => null);
      if (res) last = `HTTP ${res.status} ${(await res.text()).slice(0, 300)}`;
      return res?.status === 200;
    },
    30_000,
    'the agent console through the console routers',
    { describe: () => last },
  );

  return {
    url,
    healthPath,
    token: owner.token,
    replicas,
    loadBalancer,
    async killReplica(index, opts = {}) {
      const replica = replicas[index];
      if (!replica) throw new RangeError(`there is no console router ${index}`);
      if (replica.process.running()) await replica.process.stop(opts.signal ?? 'SIGKILL');
      if (opts.restart === false) return;
      replica.process = await startRouter(Number(new URL(replica.url).port));
    },
    async close() {
      await loadBalancer?.stop();
      await Promise.all(replicas.map((r) => r.process.stop()));
      await agent.stop();
      await host.process.stop();
    },
  };
}
