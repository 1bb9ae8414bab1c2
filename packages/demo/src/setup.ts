/**
 * What the five steps need, set up idempotently through the public APIs: a runtime host that heartbeats, a
 * `report` agent of the dev project started at the hub, an artifact schema and a contract routing the demo
 * intent to a two-stage template. Every item is reused when it already exists.
 */
import { hostname } from 'node:os';
import { APIError, Hub, unwrap } from '@svc/sdk';
import type { Contract, HubApi, Workflow } from '@svc/sdk';
import type { HubSession } from './hub-session';
import { answersReady, DemoError } from './stack-file';
import type { StackFile } from './stack-file';

export type RuntimeHost = HubApi.components['schemas']['RuntimeHost'];
export type Agent = HubApi.components['schemas']['Agent'];

export const HOST_NAME = 'demo-runtime-host';
export const AGENT_NAME = 'demo-reference-agent';
export const AGENT_MODEL = 'local/echo';
export const CAPABILITY = 'report';
export const SCHEMA_NAME = 'weekly-status-report';
export const SCHEMA_VERSION = '1.0.0';
export const CONTRACT_NAME = 'Demo: weekly status report';
export const INTENT_PHRASE = 'weekly status report';
const TEMPLATE_KEY = 'demo-weekly-status-report';
const TEMPLATE_VERSION = '1.0.0';
const RUNTIME_VERSION = 'svc-demo-0.1.0';
/** Agent names tried in order: the fixed name, then numbered ones when an earlier one cannot be used. */
const AGENT_NAME_ATTEMPTS = 10;

/** A weekly status report: what the reference agent fills from the intent on the final stage. */
export const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Weekly status report',
  type: 'object',
  required: ['title', 'summary', 'week_of', 'items'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    summary: { type: 'string', minLength: 1, maxLength: 2000 },
    week_of: { type: 'string', format: 'date' },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: {
        type: 'object',
        required: ['name', 'status'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 200 },
          status: { type: 'string', enum: ['on_track', 'at_risk', 'blocked', 'done'] },
          note: { type: 'string', maxLength: 1000 },
        },
      },
    },
  },
};

/** A failure as a {@link DemoError} naming what was being done (a DemoError passes through). */
export function asDemoError(what: string, error: unknown): DemoError {
  if (error instanceof DemoError) return error;
  if (error instanceof APIError) {
    return new DemoError(`${what} failed: HTTP ${error.status} ${error.code} — ${error.message}`);
  }
  return new DemoError(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
}

/** Runs `fn`, turning any failure into a {@link DemoError} naming what was being done. */
export async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asDemoError(what, error);
  }
}

function listenOn(url: string): { bind_host: string; listen_port: number } {
  const u = new URL(url);
  return { bind_host: u.hostname, listen_port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
}

export interface HostResult {
  host: RuntimeHost;
  created: boolean;
}

/** The demo's runtime host (by name), registered with the local relay and console router when missing. */
export async function ensureRuntimeHost(
  session: HubSession,
  stack: StackFile,
  workdirRoot: string,
): Promise<HostResult> {
  const workspace = { path: { workspace: stack.workspace.slug } };
  const find = async () =>
    unwrap(
      await session.hub.raw.GET('/api/v1/workspaces/{workspace}/runtime-hosts', { params: workspace }),
    ).find((h) => h.name === HOST_NAME);
  const existing = await session.call(find);
  if (existing) return { host: existing, created: false };
  try {
    const registered = await session.call(async () =>
      unwrap(
        await session.hub.raw.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
          params: workspace,
          body: {
            name: HOST_NAME,
            hostname: hostname().slice(0, 253) || 'localhost',
            workdir_root: workdirRoot,
            console_public_base_url: stack.console_router_url,
            relay_public_url: stack.relay_url,
            console_router: listenOn(stack.console_router_url),
            relay: listenOn(stack.relay_url),
          },
        }),
      ),
    );
    return { host: registered.host, created: true };
  } catch (error) {
    // Registered meanwhile by another run: use that one.
    if (error instanceof APIError && error.code === 'runtime_host_name_taken') {
      const raced = await session.call(find);
      if (raced) return { host: raced, created: false };
    }
    throw error;
  }
}

/**
 * Heartbeats for the runtime host, as its runtime would: with the stack's runtime key, reporting whether
 * the local relay and console router answer `/readyz`.
 */
export class HostHeartbeat {
  private readonly client: Hub;
  private timer: NodeJS.Timeout | undefined;
  lastError: string | undefined;

  constructor(
    private readonly stack: StackFile,
    private readonly hostId: string,
  ) {
    this.client = new Hub({ baseUrl: stack.hub_url, apiKey: stack.api_keys.agent_runtime });
  }

  async beat(): Promise<RuntimeHost> {
    const [relayReady, consoleReady] = await Promise.all([
      answersReady(this.stack.relay_url),
      answersReady(this.stack.console_router_url),
    ]);
    return unwrap(
      await this.client.raw.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId: this.hostId } },
        body: {
          relay_ready: relayReady,
          console_router_ready: consoleReady,
          runtime_version: RUNTIME_VERSION,
        },
      }),
    );
  }

  /** Keeps beating every `intervalMs` (the hub calls a host fresh for 45 s) until {@link stop}. */
  start(intervalMs = 15_000): void {
    this.timer = setInterval(() => {
      this.beat().then(
        () => (this.lastError = undefined),
        (error: unknown) => (this.lastError = (error as Error).message),
      );
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

export interface AgentResult {
  agent: Agent;
  created: boolean;
  /** Why an earlier name was passed over (evicted, another project or host, missing capability). */
  skipped: string[];
}

function unusableBecause(agent: Agent, stack: StackFile, hostId: string): string | undefined {
  if (agent.status === 'evicted') return 'evicted';
  if (agent.project_id !== stack.project.id) return `belongs to project ${agent.project_id ?? 'none'}`;
  if (agent.runtime_instance_id !== hostId) return `runs on host ${agent.runtime_instance_id ?? 'none'}`;
  if (!agent.capabilities.includes(CAPABILITY)) return `lacks capability ${CAPABILITY}`;
  return undefined;
}

/**
 * The demo's agent in the dev project with capability `report` on the demo host: the one named
 * `demo-reference-agent` when it can be used, else the first usable or free numbered name.
 */
export async function ensureAgent(
  session: HubSession,
  stack: StackFile,
  hostId: string,
): Promise<AgentResult> {
  const workspace = { path: { workspace: stack.workspace.slug } };
  const agents = await session.call(async () =>
    unwrap(await session.hub.raw.GET('/api/v1/workspaces/{workspace}/agents', { params: workspace })),
  );
  const byName = new Map(agents.map((a) => [a.name, a]));
  const skipped: string[] = [];
  for (let i = 1; i <= AGENT_NAME_ATTEMPTS; i += 1) {
    const name = i === 1 ? AGENT_NAME : `${AGENT_NAME}-${i}`;
    const existing = byName.get(name);
    if (existing) {
      const reason = unusableBecause(existing, stack, hostId);
      if (!reason) return { agent: existing, created: false, skipped };
      skipped.push(`${name} ${reason}`);
      continue;
    }
    const agent = await session.call(async () =>
      unwrap(
        await session.hub.raw.POST('/api/v1/workspaces/{workspace}/agents', {
          params: workspace,
          body: {
            name,
            runtime_instance_id: hostId,
            capabilities: [CAPABILITY],
            project_code: stack.project.code,
            model: AGENT_MODEL,
          },
        }),
      ),
    );
    return { agent, created: true, skipped };
  }
  throw new DemoError(`no usable demo agent name: ${skipped.join('; ')}`);
}

export interface StartedAgent {
  agent: Agent;
  token: string;
  /** True when the hub still had it running and it was stopped first. */
  restarted: boolean;
}

/** Starts the agent at the hub (direct launch); an agent still running there is stopped and started again. */
export async function startAgentAtHub(session: HubSession, agentId: string): Promise<StartedAgent> {
  const start = async () =>
    unwrap(
      await session.hub.raw.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId } },
        body: { launch_path: 'direct', model: AGENT_MODEL },
      }),
    );
  try {
    const started = await session.call(start);
    return { agent: started.agent, token: started.agent_token, restarted: false };
  } catch (error) {
    if (!(error instanceof APIError) || error.code !== 'agent_already_running') throw error;
  }
  await session.call(async () =>
    unwrap(await session.hub.raw.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId } } })),
  );
  const started = await session.call(start);
  return { agent: started.agent, token: started.agent_token, restarted: true };
}

/** Waits until the hub has seen a heartbeat from the agent later than `after` (the start). */
export async function waitForAgentHeartbeat(
  session: HubSession,
  agentId: string,
  after: string | null,
  options: {
    timeoutMs: number;
    exited: () => number | string | undefined;
    lastLine: () => string | undefined;
    signal?: AbortSignal;
  },
): Promise<Agent> {
  const since = after ? Date.parse(after) : 0;
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    options.signal?.throwIfAborted();
    const exit = options.exited();
    if (exit !== undefined) {
      const last = options.lastLine();
      throw new DemoError(
        `the reference agent exited (${exit}) before its first heartbeat${last ? `: ${last}` : ''}`,
      );
    }
    const agent = await session.call(async () =>
      unwrap(await session.hub.raw.GET('/api/v1/agents/{agentId}', { params: { path: { agentId } } })),
    );
    const seen = agent.last_heartbeat_at ? Date.parse(agent.last_heartbeat_at) : 0;
    if (seen > since) return agent;
    if (Date.now() >= deadline) {
      const last = options.lastLine();
      throw new DemoError(
        `the reference agent sent no heartbeat within ${options.timeoutMs / 1000} s${last ? ` (last output: ${last})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface SchemaResult {
  schemaId: string;
  created: boolean;
  deprecatedAt: string | null;
}

/** Registers the report schema; the same version with the same schema answers 200 (already registered). */
export async function ensureArtifactSchema(wf: Workflow, stack: StackFile): Promise<SchemaResult> {
  const result = await wf.raw.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
    params: { path: { workspaceId: stack.workspace.id } },
    body: {
      project_id: stack.project.id,
      name: SCHEMA_NAME,
      version: SCHEMA_VERSION,
      json_schema: REPORT_SCHEMA,
    },
  });
  if (result.response.status === 409) {
    throw new DemoError(
      `artifact schema ${SCHEMA_NAME}@${SCHEMA_VERSION} is already registered in project ${stack.project.code} with another JSON Schema; the demo needs its own`,
    );
  }
  const schema = unwrap(result);
  return { schemaId: schema.id, created: result.response.status === 201, deprecatedAt: schema.deprecated_at };
}

export interface ContractResult {
  contract: Contract;
  created: boolean;
}

/** The active contract named {@link CONTRACT_NAME}, created when there is none. */
export async function ensureContract(wf: Workflow, stack: StackFile): Promise<ContractResult> {
  const inProject = { projectId: stack.project.id };
  for await (const found of wf.contracts.list({ limit: 500 }, inProject)) {
    if (found.name === CONTRACT_NAME && found.is_active) return { contract: found, created: false };
  }

  const contract = await wf.contracts.create(
    {
      name: CONTRACT_NAME,
      priority: 10,
      fallback: false,
      is_active: true,
      classifier: { intentContains: [INTENT_PHRASE] },
      template: {
        key: TEMPLATE_KEY,
        version: TEMPLATE_VERSION,
        required_capabilities: [],
        artifact_schema: { name: SCHEMA_NAME, version: SCHEMA_VERSION },
        guardrails: { human_approval_required: false },
        stages: [
          { key: 'collect', title: 'Collect the week’s updates', required_capabilities: [CAPABILITY] },
          { key: 'write', title: 'Write the status report', required_capabilities: [CAPABILITY] },
        ],
      },
    },
    inProject,
  );
  return { contract, created: true };
}
