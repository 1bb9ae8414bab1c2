import { ApiError, createHubClient, unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';

type Agent = HubApi.components['schemas']['Agent'];

/** Name of the development agent whose console `pnpm start` serves. */
export const DEV_CONSOLE_AGENT_NAME = 'dev-console-agent';
/** The local provider: answers without a provider credential (the hub manages `local`). */
const MODEL = 'local/echo';
/** No workflow stage asks for it, so the agent never takes the demo's stages. */
const CAPABILITIES = ['console'];
/** What the host's heartbeat reports as its runtime version. */
const RUNTIME_VERSION = 'svc-dev-stack-0.1.0';

export interface ConsoleAgentTarget {
  hubUrl: string;
  /** The participant token of the development workspace's owner. */
  token: string;
  workspaceSlug: string;
  projectCode: string;
  hostId: string;
  servePort: number;
}

export interface StartedConsoleAgent {
  agent: Agent;
  agentToken: string;
}

/**
 * The development console agent at the hub: registered once on the development host (found again by name on
 * later runs), then started there by a direct launch; an agent the hub still counts as running (an earlier
 * run that was killed) is stopped and started again.
 */
export class ConsoleAgentAtHub {
  private readonly hub: HubClient;

  constructor(private readonly target: ConsoleAgentTarget) {
    this.hub = createHubClient({ baseUrl: target.hubUrl, token: target.token, clientName: 'dev-stack' });
  }

  async ensure(): Promise<Agent> {
    const workspace = { path: { workspace: this.target.workspaceSlug } };
    const agents = unwrap(await this.hub.GET('/api/v1/workspaces/{workspace}/agents', { params: workspace }));
    const existing = agents.find((a) => a.name === DEV_CONSOLE_AGENT_NAME);
    if (existing) {
      if (existing.status === 'evicted' || existing.runtime_instance_id !== this.target.hostId) {
        throw new Error(
          `agent ${DEV_CONSOLE_AGENT_NAME} (${existing.id}) is ${existing.status === 'evicted' ? 'evicted' : `on host ${existing.runtime_instance_id ?? 'none'}`}; use a fresh state directory or databases`,
        );
      }
      return existing;
    }
    return unwrap(
      await this.hub.POST('/api/v1/workspaces/{workspace}/agents', {
        params: workspace,
        body: {
          name: DEV_CONSOLE_AGENT_NAME,
          runtime_instance_id: this.target.hostId,
          capabilities: CAPABILITIES,
          project_code: this.target.projectCode,
          serve_port: this.target.servePort,
          model: MODEL,
        },
      }),
    );
  }

  async start(agentId: string): Promise<StartedConsoleAgent> {
    const start = async () =>
      unwrap(
        await this.hub.POST('/api/v1/agents/{agentId}/start', {
          params: { path: { agentId } },
          body: { launch_path: 'direct', model: MODEL, serve_port: this.target.servePort },
        }),
      );
    try {
      const started = await start();
      return { agent: started.agent, agentToken: started.agent_token };
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'agent_already_running') throw error;
    }
    await this.stop(agentId);
    const started = await start();
    return { agent: started.agent, agentToken: started.agent_token };
  }

  async stop(agentId: string): Promise<void> {
    unwrap(await this.hub.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId } } }));
  }
}

/**
 * Heartbeats for the development host, as a host's runtime would (a direct start needs a fresh one): with the
 * workspace's runtime key, saying its relay and console router are ready (the stack waited for both).
 */
export class DevHostHeartbeat {
  private readonly hub: HubClient;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    hubUrl: string,
    runtimeKey: string,
    private readonly hostId: string,
    private readonly onError: (message: string) => void,
  ) {
    this.hub = createHubClient({ baseUrl: hubUrl, apiKey: runtimeKey, clientName: 'dev-stack' });
  }

  async beat(): Promise<void> {
    unwrap(
      await this.hub.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: this.hostId } },
        body: { relay_ready: true, console_router_ready: true, runtime_version: RUNTIME_VERSION },
      }),
    );
  }

  /** Keeps beating every `intervalMs` (the hub calls a host fresh for 45 s) until {@link stop}. */
  start(intervalMs = 15_000): void {
    this.timer = setInterval(() => {
      this.beat().catch((error: unknown) => this.onError((error as Error).message));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/**
 * Waits until the router answers the agent's health route without a credential with 401: the route exists
 * and reaches a listening agent (404 and 503 come before any credential is read).
 */
export async function waitForConsoleRoute(healthUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const res = await fetch(healthUrl, { signal: AbortSignal.timeout(3000) });
      await res.body?.cancel();
      if (res.status === 401) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the console route ${healthUrl} did not reach the agent within ${timeoutMs / 1000} s (${last})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
