import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { WORKFLOW_SCOPES } from '@svc/auth';
import { createHubClient, createWorkflowClient, unwrap } from '@svc/contracts';
import type { HubClient, WorkflowClient } from '@svc/contracts';
import { createTestDatabase, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { MIGRATIONS_DIR } from '../src/app';

const execFileAsync = promisify(execFile);
const appsDir = path.resolve(__dirname, '..', '..');
const hubDir = path.join(appsDir, 'hub-api');
const workflowDir = path.join(appsDir, 'workflow-api');
const agentDir = path.join(appsDir, 'reference-agent');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Short engine timings so stalls, lost jobs and dead workers are noticed within seconds in tests. */
export const FAST_ENGINE_ENV = {
  WORKFLOW_STAGE_STALL_SECONDS: '3',
  WORKFLOW_SWEEP_INTERVAL_MS: '250',
  WORKFLOW_OUTBOX_REDELIVER_MS: '1500',
  WORKFLOW_RECHECK_MS: '1000',
  WORKFLOW_JOB_LOCK_MS: '2000',
};

export interface RunningAgent {
  id: string;
  name: string;
  token: string;
  process: NodeProcess | null;
  /** Starts the reference agent process (optionally with a handler module). */
  start(handler?: string): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface RunStack {
  hubUrl: string;
  workflowUrl: string;
  redisUrl: string;
  queuePrefix: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  ownerToken: string;
  hub: HubClient;
  /** A workflow client holding every workflow scope. */
  wf: WorkflowClient;
  apiKey: string;
  key(scopes: string[]): Promise<string>;
  database: Database;
  api: NodeProcess;
  worker: NodeProcess;
  restartWorker(): Promise<void>;
  /** Registers (and starts at the hub) an agent of the project with these capabilities. */
  addAgent(capabilities: string[], options?: { start?: boolean; handler?: string }): Promise<RunningAgent>;
  /** Registers an artifact schema and a contract whose template pins it. */
  seedRoute(options?: {
    intent?: string;
    stages?: { key: string; title: string; required_capabilities: string[] }[];
    approval?: boolean;
    schema?: Record<string, unknown>;
  }): Promise<{ contractId: string; intent: string; schemaName: string }>;
  close(): Promise<void>;
}

export const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['title', 'summary', 'items'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    summary: { type: 'string', minLength: 1 },
    items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name', 'score'],
        additionalProperties: false,
        properties: { name: { type: 'string' }, score: { type: 'integer', minimum: 0, maximum: 100 } },
      },
    },
  },
};

/**
 * The whole run path as real processes: the hub, the Workflow API and its worker (each from its build), over
 * fresh databases and the real Redis (a queue prefix of its own), plus reference agents started at the hub.
 */
export async function startRunStack(
  options: {
    env?: Record<string, string>;
    /** Another Postgres server for the workflow database (the hub stays on the default one). */
    workflowServerUrl?: string;
    /** Another Redis (or Redis database index) for the queues. */
    redisUrl?: string;
  } = {},
): Promise<RunStack> {
  const redisUrl = options.redisUrl ?? REDIS_URL;
  const serviceToken = `svs_${randomBytes(32).toString('base64url')}`;
  const [hubDb, wfDb] = await Promise.all([
    createTestDatabase({ migrationsDir: path.join(hubDir, 'prisma', 'migrations'), prefix: 'svc_hub' }),
    createTestDatabase({
      migrationsDir: MIGRATIONS_DIR,
      prefix: 'svc_workflow',
      ...(options.workflowServerUrl ? { serverUrl: options.workflowServerUrl } : {}),
    }),
  ]);
  const [hubPort, wfPort, workerPort] = [await freePort(), await freePort(), await freePort()];
  const hubUrl = `http://127.0.0.1:${hubPort}`;
  const workflowUrl = `http://127.0.0.1:${wfPort}`;
  const hubProcess = startBuiltEntryPoint(hubDir, 'dist/main.js', {
    DATABASE_URL: hubDb.url,
    HUB_PORT: String(hubPort),
    HUB_PUBLIC_URL: hubUrl,
    HUB_SERVICE_TOKEN: serviceToken,
    HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    HUB_MANAGED_PROVIDERS: 'local',
    LOG_LEVEL: 'warn',
  });
  const queuePrefix = `svct${randomBytes(4).toString('hex')}`;
  const wfEnv = {
    DATABASE_URL: wfDb.url,
    REDIS_URL: redisUrl,
    HUB_URL: hubUrl,
    HUB_SERVICE_TOKEN: serviceToken,
    WORKFLOW_PORT: String(wfPort),
    WORKFLOW_WORKER_PORT: String(workerPort),
    WORKFLOW_QUEUE_PREFIX: queuePrefix,
    WORKFLOW_DB_POOL_SIZE: '5',
    LOG_LEVEL: 'warn',
    ...FAST_ENGINE_ENV,
    ...options.env,
    ...(process.env.SVC_TEST_LOG_LEVEL ? { LOG_LEVEL: process.env.SVC_TEST_LOG_LEVEL } : {}),
  };
  const api = startBuiltEntryPoint(workflowDir, 'dist/main.js', wfEnv);
  let worker = startBuiltEntryPoint(workflowDir, 'dist/worker.js', wfEnv);
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  await Promise.all([
    waitUntilLive(hubProcess, hubUrl, { probe: '/readyz' }),
    waitUntilLive(api, workflowUrl, { probe: '/readyz' }),
    waitUntilLive(worker, workerUrl, { probe: '/readyz' }),
  ]);

  const password = `pw-${randomBytes(12).toString('hex')}`;
  const email = 'owner@runs.test';
  const boot = JSON.parse(
    (
      await execFileAsync(process.execPath, [path.join(hubDir, 'dist', 'bootstrap.js')], {
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: hubDb.url,
          BOOTSTRAP_WORKSPACE_SLUG: 'runs',
          BOOTSTRAP_ADMIN_EMAIL: email,
          BOOTSTRAP_ADMIN_PASSWORD: password,
          LOG_LEVEL: 'warn',
        },
      })
    ).stdout,
  ) as { workspace: { id: string; slug: string } };
  const workspace = boot.workspace;
  const ownerToken = unwrap(
    await createHubClient({ baseUrl: hubUrl }).POST('/api/v1/auth/login', { body: { email, password } }),
  ).token;
  const hub = createHubClient({ baseUrl: hubUrl, token: ownerToken });
  const project = unwrap(
    await hub.POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: workspace.slug } },
      body: { code: 'RUNS', name: 'Runs' },
    }),
  );
  const key = async (scopes: string[]) =>
    unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
        params: { path: { workspace: workspace.slug } },
        body: { name: `test ${scopes.join(' ')}`.slice(0, 200), scopes },
      }),
    ).key;
  const apiKey = await key([...WORKFLOW_SCOPES]);
  const wf = createWorkflowClient({ baseUrl: workflowUrl, apiKey });

  const host = unwrap(
    await hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: workspace.slug } },
      body: {
        name: 'runs-host',
        hostname: 'runtime-1.internal',
        workdir_root: '/srv/agents',
        console_public_base_url: 'https://console.example.test',
        relay_public_url: 'https://relay.example.test',
      } as never,
    }),
  );
  const hostId = host.host.id;
  const hostKey = await key(['runtime-hosts:write']);
  const beatHost = async () => {
    const res = await fetch(`${hubUrl}/api/v1/runtime-hosts/${hostId}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': hostKey },
      body: JSON.stringify({ relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' }),
    });
    if (res.status !== 200) throw new Error(`host heartbeat: HTTP ${res.status}`);
  };
  await beatHost();
  const hostBeat = setInterval(() => void beatHost().catch(() => undefined), 20_000);
  hostBeat.unref();

  const agents: RunningAgent[] = [];
  let agentCount = 0;
  async function addAgent(capabilities: string[], opts: { start?: boolean; handler?: string } = {}) {
    agentCount += 1;
    const name = `agent-${agentCount}-${randomBytes(3).toString('hex')}`;
    const registered = unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace: workspace.slug } },
        body: {
          name,
          runtime_instance_id: hostId,
          capabilities,
          project_code: project.code,
          model: 'local/echo',
        } as never,
      }),
    ) as { id?: string; agent?: { id: string } };
    const agentId = registered.agent?.id ?? registered.id!;
    const started = unwrap(
      await hub.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId } },
        body: { launch_path: 'direct' },
      }),
    );
    const agent: RunningAgent = {
      id: agentId,
      name,
      token: started.agent_token,
      process: null,
      async start(handler?: string) {
        agent.process = startBuiltEntryPoint(agentDir, 'dist/main.js', {
          AGENT_TOKEN: agent.token,
          HUB_URL: hubUrl,
          WORKFLOW_URL: workflowUrl,
          AGENT_POLL_WAIT_SECONDS: '10',
          LOG_LEVEL: 'warn',
          ...(handler ? { AGENT_HANDLER: handler } : {}),
        });
        // The agent is ready once the hub has seen its first heartbeat.
        const deadline = Date.now() + 15_000;
        while (Date.now() < deadline) {
          const res = await hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId } } });
          const seen = (res.data?.data as { last_heartbeat_at?: string | null } | undefined)
            ?.last_heartbeat_at;
          if (seen && Date.parse(seen) > Date.now() - 5_000 && agent.process.child.exitCode === null) return;
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error(
          `reference agent did not heartbeat: ${agent.process.stderr() || agent.process.stdout()}`,
        );
      },
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        if (agent.process) await agent.process.stop(signal, 10_000);
        agent.process = null;
      },
    };
    agents.push(agent);
    if (opts.start !== false) await agent.start(opts.handler);
    return agent;
  }

  let routeCount = 0;
  async function seedRoute(
    opts: {
      intent?: string;
      stages?: { key: string; title: string; required_capabilities: string[] }[];
      approval?: boolean;
      schema?: Record<string, unknown>;
    } = {},
  ) {
    routeCount += 1;
    const schemaName = `report-${routeCount}`;
    unwrap(
      await wf.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
        params: { path: { workspaceId: workspace.id } },
        body: {
          project_id: project.id,
          name: schemaName,
          version: '1.0.0',
          json_schema: opts.schema ?? REPORT_SCHEMA,
        },
      }),
    );
    const phrase = opts.intent ?? `route ${routeCount} report`;
    const contract = unwrap(
      await wf.POST('/api/v1/projects/{projectId}/workflow/contracts', {
        params: { path: { projectId: project.id } },
        body: {
          name: `Route ${routeCount}`,
          priority: 10,
          fallback: false,
          is_active: true,
          classifier: { intentContains: [phrase] },
          template: {
            key: `flow-${routeCount}`,
            version: '1.0.0',
            required_capabilities: [],
            artifact_schema: { name: schemaName, version: '1.0.0' },
            guardrails: { human_approval_required: opts.approval === true },
            ...(opts.stages ? { stages: opts.stages } : {}),
          },
        },
      }),
    ) as { contract_id: string };
    return { contractId: contract.contract_id, intent: phrase, schemaName };
  }

  const database = createDatabase(wfDb.url, { poolSize: 2 });
  const stack: RunStack = {
    hubUrl,
    workflowUrl,
    redisUrl,
    queuePrefix,
    workspace,
    project: { id: project.id, code: project.code },
    ownerToken,
    hub,
    wf,
    apiKey,
    key,
    database,
    api,
    get worker() {
      return worker;
    },
    async restartWorker() {
      if (worker.child.exitCode === null && worker.child.signalCode === null) await worker.stop('SIGKILL');
      worker = startBuiltEntryPoint(workflowDir, 'dist/worker.js', wfEnv);
      await waitUntilLive(worker, workerUrl, { probe: '/readyz' });
    },
    addAgent,
    seedRoute,
    async close() {
      clearInterval(hostBeat);
      if (process.env.SVC_TEST_PRINT_LOGS) {
        process.stdout.write(
          `--- workflow-api\n${api.stdout()}${api.stderr()}\n--- worker\n${worker.stdout()}${worker.stderr()}\n`,
        );
      }
      await Promise.all(agents.map((a) => a.kill('SIGTERM')));
      await Promise.all([api.stop(), worker.stop(), hubProcess.stop()]);
      await database.close();
      await Promise.all([wfDb.drop(), hubDb.drop()]);
    },
  };
  return stack;
}
