import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { deriveConsoleProxyKey } from '@svc/auth';
import { withDatabase } from '@svc/db-kit';
import { waitUntilReady } from '@svc/testing';
import { loadOrCreateSecrets, readJson, writePrivateJson } from './state';
import type { DevStackFile } from './state';
import {
  ConsoleAgentAtHub,
  DEV_CONSOLE_AGENT_NAME,
  DevHostHeartbeat,
  waitForConsoleRoute,
} from './console-agent';
import { checkPostgres, checkRedisServer } from './preflight';
import { ProcessGroup } from './processes';
import type { ManagedProcess } from './processes';
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
  /** The development console agent's serve port (its console listens on 127.0.0.1 there). */
  agentServePort: number;
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

/**
 * Brings the whole platform up on local Postgres and Redis: migrates both databases, bootstraps and seeds
 * the development workspace (idempotently), starts every service, then starts the development console agent
 * (a reference agent serving its console, routed by the console router) and writes `.svc/dev-stack.json`.
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
  /** Waits for `ready`, failing as soon as any child exits. */
  const unlessOneExits = (ready: Promise<unknown>) =>
    Promise.race([ready, failed.then((m) => Promise.reject(new Error(m)))]);
  let heartbeat: DevHostHeartbeat | undefined;
  let consoleAgent: { atHub: ConsoleAgentAtHub; id: string; process?: ManagedProcess } | undefined;
  /** The console agent stops first, and is stopped at the hub while the hub still runs. */
  const stopAll = async () => {
    heartbeat?.stop();
    if (consoleAgent) {
      if (consoleAgent.process) await group.stop(consoleAgent.process);
      await consoleAgent.atHub
        .stop(consoleAgent.id)
        .catch((error: unknown) =>
          options.write(
            `[dev-stack]        could not stop ${DEV_CONSOLE_AGENT_NAME} at the hub: ${(error as Error).message}`,
          ),
        );
    }
    await group.stopAll();
  };

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

    const hub = group.start(
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
    await unlessOneExits(waitUntilReady(hub.process, urls.hub));

    const seeded = await seedWorkspace({
      hubUrl: urls.hub,
      workspace: bootstrapped.workspace,
      email: options.adminEmail,
      password: secrets.admin_password,
      projectCode: options.projectCode,
      serviceToken: secrets.service_token,
      previousKeys: previous?.api_keys,
      runtimeHost: {
        workdirRoot: path.join(path.resolve(options.stateDir), 'agents'),
        consolePublicBaseUrl: urls.consoleRouter,
        relayPublicUrl: urls.relay,
      },
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
    const workflow = group.start('workflow-api', app('workflow-api', 'main.js'), workflowEnv, onExit);
    const worker = group.start('workflow-worker', app('workflow-api', 'worker-main.js'), workflowEnv, onExit);
    const relay = group.start(
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
    const consoleRouter = group.start(
      'console-router',
      app('console-router', 'main.js'),
      {
        CONSOLE_ROUTER_PORT: String(options.ports.consoleRouter),
        HUB_URL: urls.hub,
        // The development host: its route table is read with the workspace's runtime key (agent-runtime
        // preset, which holds runtime-config:read), and agents' proxy keys come from the dev console secret.
        SVC_RUNTIME_INSTANCE_ID: seeded.runtimeHost.id,
        SVC_WORKSPACE_API_KEY: seeded.keys.agent_runtime,
        CONSOLE_ROUTER_UPSTREAM_SECRET: secrets.console_secret,
      },
      onExit,
    );
    await unlessOneExits(
      Promise.all([
        waitUntilReady(workflow.process, urls.workflow),
        waitUntilReady(worker.process, urls.worker),
        waitUntilReady(relay.process, urls.relay),
        waitUntilReady(consoleRouter.process, urls.consoleRouter),
      ]),
    );

    // The development console agent: a reference agent serving its console on the development host.
    heartbeat = new DevHostHeartbeat(urls.hub, seeded.keys.agent_runtime, seeded.runtimeHost.id, (message) =>
      options.write(`[dev-stack]        runtime host heartbeat failed: ${message}`),
    );
    await heartbeat.beat();
    heartbeat.start();
    const atHub = new ConsoleAgentAtHub({
      hubUrl: urls.hub,
      token: seeded.token,
      workspaceSlug: bootstrapped.workspace.slug,
      projectCode: seeded.project.code,
      hostId: seeded.runtimeHost.id,
      servePort: options.agentServePort,
    });
    const registered = await atHub.ensure();
    consoleAgent = { atHub, id: registered.id };
    const started = await atHub.start(registered.id);
    const workdir = path.join(path.resolve(options.stateDir), 'agents', DEV_CONSOLE_AGENT_NAME);
    mkdirSync(workdir, { recursive: true, mode: 0o700 });
    chmodSync(workdir, 0o700);
    consoleAgent.process = group.start(
      'reference-agent',
      app('reference-agent', 'main.js'),
      {
        AGENT_TOKEN: started.agentToken,
        HUB_URL: urls.hub,
        WORKFLOW_URL: urls.workflow,
        AGENT_SERVE_PORT: String(options.agentServePort),
        AGENT_WORKDIR: workdir,
        // The key the console router proves itself with, derived from the host's console secret.
        AGENT_CONSOLE_PROXY_KEY: deriveConsoleProxyKey(secrets.console_secret, registered.id),
      },
      onExit,
    );
    const refreshed = await fetch(`${urls.consoleRouter}/routes/refresh`, { method: 'POST' });
    await refreshed.body?.cancel();
    if (refreshed.status !== 200) {
      throw new Error(`the console router could not refresh its routes (HTTP ${refreshed.status})`);
    }
    const consoleUrl = `${urls.consoleRouter}/${bootstrapped.workspace.slug}/agents/${registered.id}`;
    await unlessOneExits(waitForConsoleRoute(`${consoleUrl}/global/health`));

    const file: DevStackFile = {
      hub_url: urls.hub,
      workflow_url: urls.workflow,
      relay_url: urls.relay,
      console_router_url: urls.consoleRouter,
      workspace: bootstrapped.workspace,
      project: seeded.project,
      participant: { email: options.adminEmail, password: secrets.admin_password, token: seeded.token },
      api_keys: seeded.keys,
      agent: { id: registered.id, name: registered.name, console_url: consoleUrl },
    };
    writePrivateJson(stateFile, file);
    process.once('exit', () => group.killAll());
    return {
      file,
      stop: async () => {
        await stopAll();
        return group.exitCodes();
      },
      failed,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
