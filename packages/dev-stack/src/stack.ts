import path from 'node:path';
import { loadOrCreateSecrets, readJson, writePrivateJson } from './state';
import type { DevStackFile } from './state';
import { checkPostgres, checkRedisServer } from './preflight';
import { ProcessGroup } from './processes';
import { seedWorkspace } from './seed';

export interface StackOptions {
  repoRoot: string;
  /** Where `dev-stack.json` and `dev-secrets.json` live (default `<repo>/.svc`). */
  stateDir: string;
  /** Server URL without a database (default `postgresql://postgres@127.0.0.1:5432`). */
  databaseServerUrl: string;
  redisUrl: string;
  hubDatabase: string;
  workflowDatabase: string;
  ports: { hub: number; workflow: number; worker: number; relay: number; consoleRouter: number };
  workspaceSlug: string;
  projectCode: string;
  adminEmail: string;
  queuePrefix: string;
  rawLogs: boolean;
  write: (line: string) => void;
}

export interface RunningStack {
  file: DevStackFile;
  /** Stops every service; resolves with each one's exit code (0 when it shut down cleanly). */
  stop(): Promise<Record<string, number | string | undefined>>;
  /** Resolves when a child exits on its own (the stack is then broken). */
  failed: Promise<string>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitReady(name: string, url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status} ${await res.text()}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(200);
  }
  throw new Error(`${name} did not become ready at ${url} within ${timeoutMs / 1000} s (${last})`);
}

function withDatabase(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Brings the whole platform up on local Postgres and Redis: migrates both databases, bootstraps and seeds
 * the development workspace (idempotently), starts every service and writes `.svc/dev-stack.json`.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  await checkPostgres(withDatabase(options.databaseServerUrl, 'postgres'));
  await checkRedisServer(options.redisUrl);

  const secrets = loadOrCreateSecrets(options.stateDir);
  const stateFile = path.join(options.stateDir, 'dev-stack.json');
  const previous = readJson<DevStackFile>(stateFile);
  const app = (name: string, script: string) => path.join(options.repoRoot, 'apps', name, 'dist', script);
  const local = (port: number) => `http://127.0.0.1:${port}`;
  const urls = {
    hub: local(options.ports.hub),
    workflow: local(options.ports.workflow),
    worker: local(options.ports.worker),
    relay: local(options.ports.relay),
    consoleRouter: local(options.ports.consoleRouter),
  };
  const hubDb = withDatabase(options.databaseServerUrl, options.hubDatabase);
  const workflowDb = withDatabase(options.databaseServerUrl, options.workflowDatabase);
  const group = new ProcessGroup({ rawLogs: options.rawLogs, write: options.write });
  let reportFailure: (message: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (reportFailure = resolve));
  const onExit = (name: string, code: number | string) =>
    reportFailure(`${name} exited unexpectedly (${code})`);

  try {
    options.write('[dev-stack]        migrating databases');
    await group.run('hub-api migrate', app('hub-api', 'migrate.js'), {
      DATABASE_URL: hubDb,
      LOG_LEVEL: 'warn',
    });
    await group.run('workflow-api migrate', app('workflow-api', 'migrate.js'), {
      DATABASE_URL: workflowDb,
      LOG_LEVEL: 'warn',
    });
    const bootstrapped = JSON.parse(
      await group.run('hub-api bootstrap', app('hub-api', 'bootstrap.js'), {
        DATABASE_URL: hubDb,
        BOOTSTRAP_WORKSPACE_SLUG: options.workspaceSlug,
        BOOTSTRAP_WORKSPACE_NAME: 'Development',
        BOOTSTRAP_ADMIN_EMAIL: options.adminEmail,
        BOOTSTRAP_ADMIN_PASSWORD: secrets.admin_password,
        LOG_LEVEL: 'warn',
      }),
    ) as { workspace: { id: string; slug: string } };

    group.start(
      'hub-api',
      app('hub-api', 'main.js'),
      {
        DATABASE_URL: hubDb,
        HUB_PORT: String(options.ports.hub),
        HUB_PUBLIC_URL: urls.hub,
        HUB_WORKFLOW_PUBLIC_URL: urls.workflow,
        HUB_ENCRYPTION_KEYS: secrets.encryption_keys,
        HUB_SERVICE_TOKEN: secrets.service_token,
        // Development only: the hub authorizes the local provider itself, so `local/echo` agents start
        // without a workspace provider credential.
        HUB_MANAGED_PROVIDERS: 'local',
      },
      onExit,
    );
    await Promise.race([waitReady('hub-api', urls.hub), failed.then((m) => Promise.reject(new Error(m)))]);

    const seeded = await seedWorkspace({
      hubUrl: urls.hub,
      workspace: bootstrapped.workspace,
      email: options.adminEmail,
      password: secrets.admin_password,
      projectCode: options.projectCode,
      serviceToken: secrets.service_token,
      previousKeys: previous?.api_keys,
    });

    const workflowEnv = {
      DATABASE_URL: workflowDb,
      REDIS_URL: options.redisUrl,
      WORKFLOW_PORT: String(options.ports.workflow),
      WORKFLOW_WORKER_PORT: String(options.ports.worker),
      WORKFLOW_PUBLIC_URL: urls.workflow,
      WORKFLOW_QUEUE_PREFIX: options.queuePrefix,
      HUB_URL: urls.hub,
      HUB_SERVICE_TOKEN: secrets.service_token,
      // Seals delivery signing secrets (development keys, kept in .svc/dev-secrets.json).
      WORKFLOW_ENCRYPTION_KEYS: secrets.encryption_keys,
    };
    group.start('workflow-api', app('workflow-api', 'main.js'), workflowEnv, onExit);
    group.start('workflow-worker', app('workflow-api', 'worker.js'), workflowEnv, onExit);
    group.start(
      'relay',
      app('relay', 'main.js'),
      {
        RELAY_PORT: String(options.ports.relay),
        SVC_HUB_URL: urls.hub,
        SVC_WORKSPACE: bootstrapped.workspace.slug,
        SVC_WORKSPACE_API_KEY: seeded.keys.agent_runtime,
        SVC_RELAY_TOKEN: secrets.relay_token,
      },
      onExit,
    );
    group.start(
      'console-router',
      app('console-router', 'main.js'),
      { CONSOLE_ROUTER_PORT: String(options.ports.consoleRouter), HUB_URL: urls.hub },
      onExit,
    );
    await Promise.race([
      Promise.all([
        waitReady('workflow-api', urls.workflow),
        waitReady('workflow-worker', urls.worker),
        waitReady('relay', urls.relay),
        waitReady('console-router', urls.consoleRouter),
      ]),
      failed.then((m) => Promise.reject(new Error(m))),
    ]);

    const file: DevStackFile = {
      hub_url: urls.hub,
      workflow_url: urls.workflow,
      relay_url: urls.relay,
      console_router_url: urls.consoleRouter,
      workspace: bootstrapped.workspace,
      project: seeded.project,
      participant: { email: options.adminEmail, password: secrets.admin_password, token: seeded.token },
      api_keys: seeded.keys,
    };
    writePrivateJson(stateFile, file);
    process.once('exit', () => group.killAll());
    return {
      file,
      stop: async () => {
        await group.stopAll();
        return group.exitCodes();
      },
      failed,
    };
  } catch (error) {
    await group.stopAll();
    throw error;
  }
}
