/**
 * The Workflow API's run path as real processes, for the tests that drive it end to end (the Workflow API's
 * own and the SDK's package test). It starts the apps' builds and imports none of their sources: the queues are
 * named by their values, and a caller that wants the Workflow API's Prisma client opens it itself.
 */
import { randomBytes } from 'node:crypto';
import { WORKFLOW_SCOPES } from '@svc/auth';
import { createWorkflowClient, unwrap } from '@svc/contracts';
import type { HubClient, WorkflowClient } from '@svc/contracts';
import {
  createHubDatabase,
  createHubWorkspace,
  createWorkflowDatabase,
  newServiceToken,
  startHub,
  startWorkflowApi,
  startWorkflowWorker,
  workflowEnv,
} from './platform';
import { startLoadBalancer } from './load-balancer';
import type { RunningLoadBalancer } from './load-balancer';
import { eventually, freePort } from './process';
import type { HubOwner, WorkflowEnv } from './platform';
import type { NodeProcess, StartOptions } from './process';
import { obliterateQueues, uniqueQueuePrefix } from './queues';
import {
  REPORT_SCHEMA,
  registerLiveRuntimeHost,
  registerStartedAgent,
  startReferenceAgent,
  startRuntimeHostProcess,
} from './runtime';
import { testRedisUrl } from './servers';

/** The Workflow API's queues (its `RECONCILE_QUEUE` and `DELIVERY_QUEUE`), emptied when a stack closes. */
const WORKFLOW_QUEUES = ['workflow-reconcile', 'workflow-delivery'];

/** Short engine timings so stalls, lost jobs and dead workers are noticed within seconds in tests. */
const FAST_ENGINE_ENV = {
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

/** A runtime host of the stack whose heartbeat runs in a process of its own, with the agents started on it. */
export interface RunStackHost {
  id: string;
  name: string;
  agents: RunningAgent[];
  /** Whether its heartbeat process runs. */
  running(): boolean;
  /** Kills the host's heartbeat and every agent process on it at once (SIGKILL by default): a machine that dies. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A handle on a database that the stack closes before it drops the database. */
export interface Closable {
  close(): Promise<void>;
}

export interface RunStack<Database extends Closable | undefined = undefined> {
  hubUrl: string;
  workflowUrl: string;
  /** The worker's probe listener (`/healthz`, `/readyz`, `/metrics`, `/queues`). */
  workerUrl: string;
  redisUrl: string;
  queuePrefix: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  ownerToken: string;
  /** The workspace's signed-in owner (to register runtime hosts, agents and keys of one's own). */
  owner: HubOwner;
  hub: HubClient;
  /** A workflow client holding every workflow scope. */
  wf: WorkflowClient;
  apiKey: string;
  key(scopes: string[]): Promise<string>;
  /** What the `database` option opened on the workflow database (undefined without one). */
  database: Database;
  /** The connection URLs of the stack's two databases (a bench meters their backends). */
  databaseUrls: { hub: string; workflow: string };
  /** The first Workflow API replica (the only one without `replicas`). */
  api: NodeProcess;
  /** The first worker replica. */
  worker: NodeProcess;
  restartWorker(): Promise<void>;
  /**
   * Every replica of each service, by index (one each without `replicas`), and where each answers itself;
   * `hubUrl` and `workflowUrl` are the load balancer's when there are several.
   */
  replicas: {
    hub: { process: NodeProcess; url: string }[];
    api: { process: NodeProcess; url: string }[];
    worker: { process: NodeProcess; url: string }[];
  };
  /** HAProxy in front of the hubs and the Workflow APIs, when there are several replicas. */
  loadBalancer: RunningLoadBalancer | null;
  /** Kills replica `index` of a service (SIGKILL by default) and, unless `restart: false`, starts it again on its port. */
  killReplica(
    service: 'hub' | 'api' | 'worker',
    index: number,
    options?: { signal?: NodeJS.Signals; restart?: boolean },
  ): Promise<void>;
  /**
   * Registers (and starts at the hub) an agent of the project with these capabilities, on the stack's first
   * host or on `host` (one from {@link RunStack.addHost}).
   */
  addAgent(
    capabilities: string[],
    options?: { start?: boolean; handler?: string; host?: RunStackHost },
  ): Promise<RunningAgent>;
  /** Registers another runtime host, heartbeating every 10 s from a process of its own (see `kill`). */
  addHost(name: string): Promise<RunStackHost>;
  /** Registers an artifact schema and a contract whose template pins it. */
  seedRoute(options?: {
    intent?: string;
    stages?: { key: string; title: string; required_capabilities: string[] }[];
    approval?: boolean;
    schema?: Record<string, unknown>;
  }): Promise<{ contractId: string; intent: string; schemaName: string }>;
  close(): Promise<void>;
}

/**
 * The whole run path as real processes: the hub, the Workflow API and its worker (each from its build), over
 * fresh databases and the real Redis (a queue prefix of its own), plus reference agents started at the hub.
 */
export async function startRunStack<Database extends Closable | undefined = undefined>(
  options: {
    env?: Record<string, string>;
    /** More environment for the hub process. */
    hubEnv?: Record<string, string>;
    /** Another Postgres server for the workflow database (the hub stays on the default one). */
    workflowServerUrl?: string;
    /** Another Redis (or Redis database index) for the queues. */
    redisUrl?: string;
    /**
     * Opens the caller's own handle on the workflow database (such as the Workflow API's Prisma client,
     * which this package does not know), given its URL: the stack's `database`.
     */
    database?: (url: string) => Database;
    /**
     * Replicas of the hub, the Workflow API and the worker (default 1). With more than one, each service runs
     * that many processes on the same databases and Redis, behind HAProxy (`infra/load-balancer`), and the
     * hubs announce credential changes to each other through Redis, as deployed.
     */
    replicas?: number;
    /**
     * Counts of each service on their own, each defaulting to `replicas`: a bench compares one Workflow API
     * and worker with two while the hub stays one. With any count above one, the hubs and the Workflow APIs
     * are behind HAProxy, as with `replicas`.
     */
    hubs?: number;
    apis?: number;
    workers?: number;
    /**
     * HAProxy in front of the hubs and the Workflow APIs even with one of each: a bench comparing replica counts
     * then compares them behind the same balancer, as a deployment scales out behind its own.
     */
    balancer?: boolean;
    /**
     * The services' own defaults for the engine's timings and the Workflow API's pool size, instead of the short
     * timings and the pool of 5 the tests use (a bench measures what is deployed).
     */
    serviceDefaults?: boolean;
    /** How the hubs, Workflow APIs and workers are started (Node options such as `--cpu-prof`). */
    process?: StartOptions;
    /** More environment for the reference agents `addAgent` starts. */
    agentEnv?: Record<string, string>;
    /**
     * Puts something between the Workflow API (and its worker) and the hub: given the hub's URL, answers the URL
     * they are to call instead (a test's slow proxy). Tokens keep the hub's own URL as their issuer.
     */
    workflowHubUrl?: (hubUrl: string) => Promise<string>;
  } = {},
): Promise<RunStack<Database>> {
  const redisUrl = options.redisUrl ?? testRedisUrl();
  const serviceToken = newServiceToken();
  const count = Math.max(1, options.replicas ?? 1);
  const hubCount = Math.max(1, options.hubs ?? count);
  const apiCount = Math.max(1, options.apis ?? count);
  const workerCount = Math.max(1, options.workers ?? count);
  const balanced = options.balancer === true || Math.max(hubCount, apiCount, workerCount) > 1;
  const processOptions = options.process ?? {};
  const queuePrefix = uniqueQueuePrefix('svct');
  const [hubDb, wfDb] = await Promise.all([
    createHubDatabase(),
    createWorkflowDatabase('svc_workflow', options.workflowServerUrl),
  ]);
  const front = balanced ? { hub: await freePort(), workflow: await freePort() } : null;
  const replicaHubEnv: Record<string, string> = front
    ? {
        // Every replica issues and checks tokens as the one public hub, with the same sealing keys.
        HUB_PUBLIC_URL: `http://127.0.0.1:${front.hub}`,
        HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
        HUB_REDIS_URL: redisUrl,
        HUB_REDIS_PREFIX: queuePrefix,
      }
    : {};
  const hubOptions = (port?: number) => ({
    databaseUrl: hubDb.url,
    serviceToken,
    ...(port ? { port } : {}),
    env: { HUB_MANAGED_PROVIDERS: 'local', ...replicaHubEnv, ...options.hubEnv },
    process: processOptions,
  });
  const hubs: { process: NodeProcess; url: string }[] = [];
  for (let i = 0; i < hubCount; i += 1) hubs.push(await startHub(hubOptions()));
  const hubUrl = front ? `http://127.0.0.1:${front.hub}` : hubs[0]!.url;
  const wfEnvs: WorkflowEnv[] = [];
  const wfHubUrl = options.workflowHubUrl ? await options.workflowHubUrl(hubUrl) : hubUrl;
  const engineEnv = options.serviceDefaults ? {} : { WORKFLOW_DB_POOL_SIZE: '5', ...FAST_ENGINE_ENV };
  for (let i = 0; i < Math.max(apiCount, workerCount); i += 1) {
    const wfEnv = await workflowEnv({
      databaseUrl: wfDb.url,
      redisUrl,
      queuePrefix,
      hubUrl: wfHubUrl,
      serviceToken,
      env: {
        ...(wfHubUrl !== hubUrl ? { HUB_ISSUER: hubUrl } : {}),
        ...engineEnv,
        ...(front ? { WORKFLOW_PUBLIC_URL: `http://127.0.0.1:${front.workflow}` } : {}),
        ...options.env,
        ...(process.env.SVC_TEST_LOG_LEVEL ? { LOG_LEVEL: process.env.SVC_TEST_LOG_LEVEL } : {}),
      },
    });
    wfEnvs.push(wfEnv);
  }
  const loadBalancer = front
    ? await startLoadBalancer([
        { name: 'hub', bind: `127.0.0.1:${front.hub}`, servers: hubs.map((h) => new URL(h.url).host) },
        {
          name: 'workflow',
          bind: `127.0.0.1:${front.workflow}`,
          servers: wfEnvs.slice(0, apiCount).map((e) => new URL(e.url).host),
        },
      ])
    : null;
  const workflowUrl = front ? `http://127.0.0.1:${front.workflow}` : wfEnvs[0]!.url;
  const apis = await Promise.all(
    wfEnvs
      .slice(0, apiCount)
      .map(async (e) => ({ process: await startWorkflowApi(e, processOptions), url: e.url })),
  );
  const workers = await Promise.all(
    wfEnvs
      .slice(0, workerCount)
      .map(async (e) => ({ process: await startWorkflowWorker(e, processOptions), url: e.workerUrl })),
  );
  const wfEnv = wfEnvs[0]!;

  const owner = await createHubWorkspace({
    hubUrl,
    databaseUrl: hubDb.url,
    slug: 'runs',
    email: 'owner@runs.test',
  });
  const { workspace, hub } = owner;
  const project = await owner.createProject('RUNS', 'Runs');
  const key = (scopes: string[]) => owner.createApiKey(scopes);
  const apiKey = await key([...WORKFLOW_SCOPES]);
  const wf = createWorkflowClient({ baseUrl: workflowUrl, apiKey });
  const host = await registerLiveRuntimeHost(owner, 'runs-host');

  const agents: RunningAgent[] = [];
  let agentCount = 0;
  const extraHosts: RunStackHost[] = [];
  async function addHost(name: string): Promise<RunStackHost> {
    const started = await startRuntimeHostProcess(owner, name);
    const added: RunStackHost = {
      id: started.id,
      name,
      agents: [],
      running: () => started.process.running(),
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        await Promise.all([started.process.stop(signal, 10_000), ...added.agents.map((a) => a.kill(signal))]);
      },
    };
    extraHosts.push(added);
    return added;
  }

  async function addAgent(
    capabilities: string[],
    opts: { start?: boolean; handler?: string; host?: RunStackHost } = {},
  ) {
    agentCount += 1;
    const name = `agent-${agentCount}-${randomBytes(3).toString('hex')}`;
    const started = await registerStartedAgent(owner, {
      name,
      hostId: opts.host?.id ?? host.id,
      projectCode: project.code,
      capabilities,
    });
    const agent: RunningAgent = {
      id: started.id,
      name,
      token: started.token,
      process: null,
      async start(handler?: string) {
        agent.process = await startReferenceAgent(owner, started, {
          workflowUrl,
          env: {
            AGENT_POLL_WAIT_SECONDS: '10',
            LOG_LEVEL: 'warn',
            ...options.agentEnv,
            ...(handler ? { AGENT_HANDLER: handler } : {}),
          },
        });
      },
      async kill(signal: NodeJS.Signals = 'SIGKILL') {
        if (agent.process) await agent.process.stop(signal, 10_000);
        agent.process = null;
      },
    };
    agents.push(agent);
    opts.host?.agents.push(agent);
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
    // The replica that wrote the contract announces it to the others (decision 109), asynchronously: a request
    // the balancer sends to another one right away could still come before the notice does.
    if (apis.length > 1) {
      for (const api of apis) {
        const replica = createWorkflowClient({ baseUrl: api.url, apiKey });
        await eventually(
          () =>
            replica
              .POST('/api/v1/projects/{projectId}/workflow/resolve-intent', {
                params: { path: { projectId: project.id } },
                body: { intent: phrase },
              })
              .then(
                (res) => (res.data?.data.matched ? true : undefined),
                () => undefined,
              ),
          10_000,
          `Workflow API replica ${api.url} matches "${phrase}"`,
        );
      }
    }
    return { contractId: contract.contract_id, intent: phrase, schemaName };
  }

  // Without a `database` option the type parameter is `undefined`, and so is the value.
  const database = options.database?.(wfDb.url) as Database;
  const stack: RunStack<Database> = {
    hubUrl,
    workflowUrl,
    workerUrl: wfEnv.workerUrl,
    redisUrl,
    queuePrefix,
    workspace,
    project: { id: project.id, code: project.code },
    ownerToken: owner.token,
    owner,
    hub,
    wf,
    apiKey,
    key,
    database,
    databaseUrls: { hub: hubDb.url, workflow: wfDb.url },
    get api() {
      return apis[0]!.process;
    },
    get worker() {
      return workers[0]!.process;
    },
    async restartWorker() {
      await stack.killReplica('worker', 0);
    },
    replicas: { hub: hubs, api: apis, worker: workers },
    loadBalancer,
    async killReplica(service, index, opts = {}) {
      const list = service === 'hub' ? hubs : service === 'api' ? apis : workers;
      const replica = list[index];
      if (!replica) throw new RangeError(`the stack has no ${service} replica ${index}`);
      if (replica.process.running()) await replica.process.stop(opts.signal ?? 'SIGKILL');
      if (opts.restart === false) return;
      const env = wfEnvs[index]!;
      if (service === 'hub') {
        replica.process = (await startHub(hubOptions(Number(new URL(replica.url).port)))).process;
      } else {
        replica.process =
          service === 'api'
            ? await startWorkflowApi(env, processOptions)
            : await startWorkflowWorker(env, processOptions);
      }
    },
    addAgent,
    addHost,
    seedRoute,
    async close() {
      host.stop();
      await Promise.all(extraHosts.map((h) => h.kill('SIGTERM')));
      if (process.env.SVC_TEST_PRINT_LOGS) {
        for (const [name, list] of [
          ['workflow-api', apis],
          ['worker', workers],
        ] as const) {
          for (const { process: p } of list)
            process.stdout.write(`--- ${name}\n${p.stdout()}${p.stderr()}\n`);
        }
      }
      await Promise.all(agents.map((a) => a.kill('SIGTERM')));
      await Promise.all([...apis, ...workers, ...hubs].map((r) => r.process.stop()));
      await loadBalancer?.stop();
      await database?.close();
      await obliterateQueues(redisUrl, queuePrefix, WORKFLOW_QUEUES);
      await Promise.all([wfDb.drop(), hubDb.drop()]);
    },
  };
  return stack;
}
