import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { createTestDatabase } from './db';
import type { TestDatabase } from './db';
import { freePort, runBuiltEntryPoint, startBuiltEntryPoint, waitUntilReady } from './process';
import type { NodeProcess, StartOptions } from './process';

/** The apps this harness starts from their builds (this file sits in `packages/testing/{src,dist}`). */
const appsDir = path.resolve(__dirname, '..', '..', '..', 'apps');
export const APP_DIRS = {
  hub: path.join(appsDir, 'hub-api'),
  workflow: path.join(appsDir, 'workflow-api'),
  referenceAgent: path.join(appsDir, 'reference-agent'),
  consoleRouter: path.join(appsDir, 'console-router'),
} as const;

/** A fresh, migrated hub database (`<prefix>_t_…`; tests use `svc_hub`, benches `svc_hub_bench`). */
export function createHubDatabase(prefix = 'svc_hub', serverUrl?: string): Promise<TestDatabase> {
  const migrationsDir = path.join(APP_DIRS.hub, 'prisma', 'migrations');
  return createTestDatabase({ migrationsDir, prefix, ...(serverUrl ? { serverUrl } : {}) });
}

/** A fresh, migrated workflow database (`<prefix>_t_…`; tests use `svc_workflow`, benches `svc_workflow_bench`). */
export function createWorkflowDatabase(prefix = 'svc_workflow', serverUrl?: string): Promise<TestDatabase> {
  const migrationsDir = path.join(APP_DIRS.workflow, 'prisma', 'migrations');
  return createTestDatabase({ migrationsDir, prefix, ...(serverUrl ? { serverUrl } : {}) });
}

/** A service token as the hub and its callers share it. */
export function newServiceToken(): string {
  return `svs_${randomBytes(32).toString('base64url')}`;
}

/** Starts a process and waits for its `/readyz`; a process that never gets ready is stopped before failing. */
async function startReady(
  appDir: string,
  script: string,
  env: Record<string, string>,
  url: string,
  options: StartOptions,
): Promise<NodeProcess> {
  const proc = startBuiltEntryPoint(appDir, script, env, options);
  try {
    await waitUntilReady(proc, url);
  } catch (error) {
    await proc.stop('SIGKILL');
    throw error;
  }
  return proc;
}

export interface HubOptions {
  databaseUrl: string;
  serviceToken: string;
  /** Default `warn`. */
  logLevel?: string;
  /** More variables, e.g. `HUB_MANAGED_PROVIDERS`. */
  env?: Record<string, string>;
  process?: StartOptions;
  /** The address it listens on and names itself by (default 127.0.0.1). */
  host?: string;
  /** Listen here (a replica restarted on its port); default a free port. */
  port?: number;
}

export interface RunningHub {
  url: string;
  process: NodeProcess;
}

/** The built hub (`dist/main.js`) on a free 127.0.0.1 port, ready. */
export async function startHub(options: HubOptions): Promise<RunningHub> {
  const port = options.port ?? (await freePort());
  const host = options.host ?? '127.0.0.1';
  const url = `http://${host}:${port}`;
  const env = {
    HUB_HOST: host,
    HUB_PORT: String(port),
    HUB_PUBLIC_URL: url,
    DATABASE_URL: options.databaseUrl,
    HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    HUB_SERVICE_TOKEN: options.serviceToken,
    LOG_LEVEL: options.logLevel ?? 'warn',
    ...options.env,
  };
  const process = await startReady(APP_DIRS.hub, 'dist/main.js', env, url, {
    name: 'the hub',
    ...options.process,
  });
  return { url, process };
}

export interface BootstrapInput {
  /** The hub's database. */
  databaseUrl: string;
  slug: string;
  name?: string;
  email: string;
  password: string;
}

/** A workspace and its owner, made with the hub's own operator command (`dist/bootstrap.js`). */
export async function bootstrapHubWorkspace(input: BootstrapInput): Promise<{ id: string; slug: string }> {
  const stdout = await runBuiltEntryPoint(
    APP_DIRS.hub,
    'dist/bootstrap.js',
    {
      DATABASE_URL: input.databaseUrl,
      BOOTSTRAP_WORKSPACE_SLUG: input.slug,
      ...(input.name ? { BOOTSTRAP_WORKSPACE_NAME: input.name } : {}),
      BOOTSTRAP_ADMIN_EMAIL: input.email,
      BOOTSTRAP_ADMIN_PASSWORD: input.password,
      LOG_LEVEL: 'warn',
    },
    { name: 'hub bootstrap' },
  );
  const line = stdout.trim().split('\n').pop() ?? '';
  return (JSON.parse(line) as { workspace: { id: string; slug: string } }).workspace;
}

/** A workspace's owner, signed in: the hub client with their token and what tests and benches make with it. */
export interface HubOwner {
  hubUrl: string;
  workspace: { id: string; slug: string };
  token: string;
  hub: HubClient;
  createProject(code: string, name?: string): Promise<{ id: string; code: string }>;
  /** A workspace API key holding exactly these scopes. */
  createApiKey(scopes: string[], name?: string): Promise<string>;
}

/**
 * Bootstraps a workspace (owner `email`, a random password) in the hub's database and signs its owner in
 * through the running hub's public API.
 */
export async function createHubWorkspace(input: {
  hubUrl: string;
  databaseUrl: string;
  slug: string;
  name?: string;
  email: string;
}): Promise<HubOwner> {
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const workspace = await bootstrapHubWorkspace({ ...input, password });
  return signInHubOwner(input.hubUrl, workspace, input.email, password);
}

/** Signs a workspace's owner in through the hub's public API. */
export async function signInHubOwner(
  hubUrl: string,
  workspace: { id: string; slug: string },
  email: string,
  password: string,
): Promise<HubOwner> {
  const session = unwrap(
    await createHubClient({ baseUrl: hubUrl }).POST('/api/v1/auth/login', { body: { email, password } }),
  );
  const hub = createHubClient({ baseUrl: hubUrl, token: session.token });
  const inWorkspace = { path: { workspace: workspace.slug } };
  return {
    hubUrl,
    workspace,
    token: session.token,
    hub,
    async createProject(code, name = code) {
      const project = unwrap(
        await hub.POST('/api/v1/workspaces/{workspace}/projects', {
          params: inWorkspace,
          body: { code, name },
        }),
      );
      return { id: project.id, code: project.code };
    },
    async createApiKey(scopes, name = `test ${scopes.join(' ')}`.slice(0, 200)) {
      const created = unwrap(
        await hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
          params: inWorkspace,
          body: { name, scopes },
        }),
      );
      return created.key;
    },
  };
}

export interface WorkflowEnvInput {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
  hubUrl: string;
  serviceToken: string;
  /** Default `warn`. */
  logLevel?: string;
  /** More variables (engine timings, pool size, delivery settings); they win over the defaults above. */
  env?: Record<string, string>;
  /** The address both listen on and the API names itself by (default 127.0.0.1). */
  host?: string;
}

/** The environment the Workflow API and its worker share, with a free port for each. */
export interface WorkflowEnv {
  env: Record<string, string>;
  /** Where the Workflow API answers. */
  url: string;
  /** Where the worker's probes answer. */
  workerUrl: string;
}

export async function workflowEnv(input: WorkflowEnvInput): Promise<WorkflowEnv> {
  const [port, workerPort] = [await freePort(), await freePort()];
  const host = input.host ?? '127.0.0.1';
  const url = `http://${host}:${port}`;
  return {
    url,
    workerUrl: `http://${host}:${workerPort}`,
    env: {
      WORKFLOW_HOST: host,
      WORKFLOW_PORT: String(port),
      WORKFLOW_WORKER_PORT: String(workerPort),
      WORKFLOW_PUBLIC_URL: url,
      WORKFLOW_QUEUE_PREFIX: input.queuePrefix,
      DATABASE_URL: input.databaseUrl,
      REDIS_URL: input.redisUrl,
      HUB_URL: input.hubUrl,
      HUB_SERVICE_TOKEN: input.serviceToken,
      LOG_LEVEL: input.logLevel ?? 'warn',
      ...input.env,
    },
  };
}

/** The built Workflow API (`dist/main.js`), ready. */
export function startWorkflowApi(wf: WorkflowEnv, options: StartOptions = {}): Promise<NodeProcess> {
  return startReady(APP_DIRS.workflow, 'dist/main.js', wf.env, wf.url, {
    name: 'the Workflow API',
    ...options,
  });
}

/** The built worker (`dist/worker-main.js`), ready. */
export function startWorkflowWorker(wf: WorkflowEnv, options: StartOptions = {}): Promise<NodeProcess> {
  return startReady(APP_DIRS.workflow, 'dist/worker-main.js', wf.env, wf.workerUrl, {
    name: 'the workflow worker',
    ...options,
  });
}
