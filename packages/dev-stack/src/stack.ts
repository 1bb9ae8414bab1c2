import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { withDatabase } from '@svc/db-kit';
import { ChildRegistry, stopLeftoverChildren } from '@svc/service-kit/child-registry';
import { freePort, sleep, startLoadBalancer, waitUntilReady } from '@svc/testing';
import type { RunningLoadBalancer } from '@svc/testing';
import { checkDatabaseSecrets, markDatabaseSecrets, secretsMark } from './database-secrets';
import { acquireStackLock, loadOrCreateSecrets, readJson, writePrivateJson } from './state';
import type { DevStackFile } from './state';
import {
  DEV_AGENT_CAPABILITIES,
  DEV_AGENT_MODEL,
  DEV_AGENT_NAME,
  SvcCli,
  waitForConsoleRoute,
} from './svc-runtime';
import { checkPostgres, checkRedisServer } from './preflight';
import { ProcessGroup } from './processes';
import type { ManagedProcess } from './processes';
import { seedWorkspace, stopAgentAsParticipant } from './seed';

export interface StackOptions {
  repoRoot: string;
  /** Where `dev-stack.json` and `dev-secrets.json` live (default `<repo>/.svc`). */
  stateDir: string;
  /** Server URL without a database (default `postgresql://postgres@127.0.0.1:5432`). */
  databaseServerUrl: string;
  redisUrl: string;
  hubDatabase: string;
  workflowDatabase: string;
  ports: {
    hub: number;
    workflow: number;
    worker: number;
    relay: number;
    consoleRouter: number;
    controlWeb: number;
  };
  workspaceSlug: string;
  projectCode: string;
  adminEmail: string;
  queuePrefix: string;
  /** The development console agent's serve port (its console listens on 127.0.0.1 there). */
  agentServePort: number;
  /**
   * Processes of the hub, the Workflow API and the worker (default 1). With more, each runs that many replicas
   * on the same databases and Redis, and HAProxy (`infra/load-balancer/haproxy.cfg`) answers on the hub's and
   * the Workflow API's ports in front of them; the replicas listen on free ports (printed at start).
   */
  replicas?: number;
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
 * the development workspace (idempotently), starts the hub and the Workflow API, then brings this machine up
 * as the workspace's runtime host the way an operator does — `svc login --pull-runtime`, `svc runtime up`
 * (relay, console router, heartbeats, agent supervision) and `svc start` of the development agent (a
 * reference agent serving its console), then the control web app — and writes `.svc/dev-stack.json`.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  await checkPostgres(withDatabase(options.databaseServerUrl, 'postgres'));
  await checkRedisServer(options.redisUrl);
  const releaseLock = await acquireStackLock(options.stateDir);
  try {
    return await startLocked(options, releaseLock);
  } catch (error) {
    releaseLock();
    throw error;
  }
}

async function startLocked(options: StackOptions, releaseLock: () => void): Promise<RunningStack> {
  // What a stack that was killed (kill -9, its terminal closed) left running goes first: it would hold the
  // ports. The last started stops first: `svc runtime up` marks its agents stopped while the hub still runs.
  const childrenFile = path.join(options.stateDir, 'children.json');
  await stopLeftoverChildren(childrenFile, 30_000, (line) => options.write(`[dev-stack]        ${line}`), {
    by: 'a development stack',
    order: 'last-first',
  });

  const secrets = loadOrCreateSecrets(options.stateDir);
  const databases = [options.hubDatabase, options.workflowDatabase];
  const mark = secretsMark(secrets.encryption_keys);
  await checkDatabaseSecrets(
    options.databaseServerUrl,
    databases,
    mark,
    path.join(options.stateDir, 'dev-secrets.json'),
  );
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
    controlWeb: local(options.ports.controlWeb),
  };
  const hubDb = withDatabase(options.databaseServerUrl, options.hubDatabase);
  const workflowDb = withDatabase(options.databaseServerUrl, options.workflowDatabase);
  const registry = new ChildRegistry(childrenFile);
  const group = new ProcessGroup({ rawLogs: options.rawLogs, write: options.write, registry });
  const replicas = Math.max(1, options.replicas ?? 1);
  /**
   * Where each replica of a service listens: the service's own port when it runs alone; with replicas, free
   * ports chosen now (HAProxy takes the service's port), kept when a replica is started again.
   */
  const replicaPorts = async (port: number) =>
    replicas === 1 ? [port] : Promise.all(Array.from({ length: replicas }, () => freePort()));
  const ports = {
    hub: await replicaPorts(options.ports.hub),
    workflow: await replicaPorts(options.ports.workflow),
    worker: await replicaPorts(options.ports.worker),
    // The runtime host's console routers (`svc runtime up --routers N --router-ports …`).
    consoleRouter: await replicaPorts(options.ports.consoleRouter),
  };
  /** A service's process name: `hub-api`, or `hub-api-1`, `hub-api-2` … with replicas. */
  const replicaName = (name: string, i: number) => (replicas === 1 ? name : `${name}-${i + 1}`);
  let loadBalancer: RunningLoadBalancer | undefined;
  let stopping = false;
  let reportFailure: (message: string) => void = () => undefined;
  const failed = new Promise<string>((resolve) => (reportFailure = resolve));
  const onExit = (name: string, code: number | string) =>
    reportFailure(`${name} exited unexpectedly (${code})`);
  /** Waits for `ready`, failing as soon as any child exits. */
  const unlessOneExits = <T>(ready: Promise<T>): Promise<T> =>
    Promise.race([ready, failed.then((m): Promise<T> => Promise.reject(new Error(m)))]);
  /**
   * Starts a service's process. Alone, its unexpected exit breaks the stack; as one of several replicas, it is
   * started again a second later (the load balancer sends requests to the others meanwhile), as a deployment
   * would replace a pod.
   */
  const startReplica = (name: string, script: string, env: Record<string, string>): ManagedProcess => {
    if (replicas === 1) return group.start(name, script, env, onExit);
    const restart = (_: string, code: number | string) => {
      if (stopping) return;
      options.write(`[dev-stack]        ${name} exited (${code}); starting it again`);
      setTimeout(() => {
        if (!stopping) group.start(name, script, env, restart);
      }, 1_000).unref();
    };
    return group.start(name, script, env, restart);
  };
  let svc: SvcCli | undefined;
  let runtime: ManagedProcess | undefined;
  let agentStarted = false;
  let workspaceSlug: string | undefined;
  /**
   * The agent is stopped first with `svc stop` (process, hub state and local state, its id kept), while the
   * runtime and the hub still run; when the hub refuses the host's runtime key (revoked, or superseded by
   * another pull), the participant marks it stopped instead, so the next start finds it stopped. Then
   * `svc runtime up` gets SIGTERM and stops the relay and router.
   */
  const stopAll = async () => {
    stopping = true;
    if (svc && agentStarted) {
      await svc.run(['stop', DEV_AGENT_NAME]).catch(async (error: unknown) => {
        options.write(`[dev-stack]        svc stop ${DEV_AGENT_NAME}: ${(error as Error).message}`);
        if (!workspaceSlug) return;
        await stopAgentAsParticipant({
          hubUrl: urls.hub,
          workspace: workspaceSlug,
          email: options.adminEmail,
          password: secrets.admin_password,
          agentName: DEV_AGENT_NAME,
        }).then(
          (status) =>
            options.write(
              `[dev-stack]        ${DEV_AGENT_NAME} marked ${status} at the hub as the participant`,
            ),
          (failure: unknown) =>
            options.write(
              `[dev-stack]        ${DEV_AGENT_NAME} could not be marked stopped at the hub: ${(failure as Error).message}`,
            ),
        );
      });
    }
    if (runtime) await group.stop(runtime, 30_000);
    await group.stopAll();
    if (loadBalancer) {
      await loadBalancer.stop();
      if (loadBalancer.pid !== undefined) await registry.remove(loadBalancer.pid);
    }
    releaseLock();
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
    workspaceSlug = bootstrapped.workspace.slug;

    const hubEnv = (i: number) => ({
      DATABASE_URL: hubDb,
      HUB_PORT: String(ports.hub[i]),
      // Every replica issues and checks tokens as the one public hub (the load balancer's address).
      HUB_PUBLIC_URL: urls.hub,
      HUB_WORKFLOW_PUBLIC_URL: urls.workflow,
      HUB_ENCRYPTION_KEYS: secrets.encryption_keys,
      HUB_SERVICE_TOKEN: secrets.service_token,
      // Development only: the hub authorizes the local provider itself, so `local/echo` agents start
      // without a workspace provider credential.
      HUB_MANAGED_PROVIDERS: 'local',
      // Revocations and membership changes reach the Workflow API (and the other hubs) at once (decision 47).
      HUB_REDIS_URL: options.redisUrl,
      HUB_REDIS_PREFIX: options.queuePrefix,
    });
    const hubs = Array.from({ length: replicas }, (_, i) =>
      startReplica(replicaName('hub-api', i), app('hub-api', 'main.js'), hubEnv(i)),
    );
    await unlessOneExits(
      Promise.all(hubs.map((hub, i) => waitUntilReady(hub.process, local(ports.hub[i]!)))),
    );
    if (replicas > 1) {
      const servers = (replicaPorts: number[]) => replicaPorts.map((port) => `127.0.0.1:${port}`);
      options.write(
        `[dev-stack]        haproxy in front of ${replicas} hubs (ports ${ports.hub.join(', ')}), ${replicas} Workflow APIs (ports ${ports.workflow.join(', ')}) and ${replicas} console routers (ports ${ports.consoleRouter.join(', ')})`,
      );
      // The console routers start later (with `svc runtime up`): until then their checks fail and HAProxy
      // answers 503 on the console port.
      loadBalancer = await startLoadBalancer([
        { name: 'hub', bind: `127.0.0.1:${options.ports.hub}`, servers: servers(ports.hub) },
        {
          name: 'workflow',
          bind: `127.0.0.1:${options.ports.workflow}`,
          servers: servers(ports.workflow),
        },
        {
          name: 'console',
          bind: `127.0.0.1:${options.ports.consoleRouter}`,
          servers: servers(ports.consoleRouter),
        },
      ]);
      if (loadBalancer.pid !== undefined) await registry.add('haproxy', loadBalancer.pid);
      const balancer = loadBalancer;
      void balancer.exited.then((code) => {
        if (!stopping) onExit('haproxy', code);
      });
      await unlessOneExits(waitUntilReady(balancer, urls.hub));
    }

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
        relayPort: options.ports.relay,
        consoleRouterPort: options.ports.consoleRouter,
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
      // Development only: deliveries may go to a receiver on this machine (`pnpm deliveries:watch`), and a
      // failed one is retried within seconds. Off everywhere else.
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '1,5,30,120,600',
    };
    const workflows = Array.from({ length: replicas }, (_, i) => {
      const env = {
        ...workflowEnv,
        WORKFLOW_PORT: String(ports.workflow[i]),
        WORKFLOW_WORKER_PORT: String(ports.worker[i]),
      };
      return {
        api: startReplica(replicaName('workflow-api', i), app('workflow-api', 'main.js'), env),
        worker: startReplica(replicaName('workflow-worker', i), app('workflow-api', 'worker-main.js'), env),
        urls: [local(ports.workflow[i]!), local(ports.worker[i]!)],
      };
    });
    await unlessOneExits(
      Promise.all(
        workflows.flatMap(({ api, worker, urls: [apiUrl, workerUrl] }) => [
          waitUntilReady(api.process, apiUrl!),
          waitUntilReady(worker.process, workerUrl!),
        ]),
      ),
    );
    if (loadBalancer) await unlessOneExits(waitUntilReady(loadBalancer, urls.workflow));

    // This machine as the workspace's runtime host, brought up with the svc CLI exactly as an operator does.
    const workdirRoot = path.join(path.resolve(options.stateDir), 'agents');
    mkdirSync(workdirRoot, { recursive: true, mode: 0o700 });
    chmodSync(workdirRoot, 0o700);
    svc = new SvcCli({
      repoRoot: options.repoRoot,
      configDir: path.join(path.resolve(options.stateDir), 'cli'),
      runtimeInstanceId: seeded.runtimeHost.id,
      workdirRoot,
      workflowUrl: urls.workflow,
    });
    options.write('[dev-stack]        svc login --pull-runtime');
    await svc.run(
      [
        'login',
        '--hub-url',
        urls.hub,
        '--workspace',
        bootstrapped.workspace.slug,
        '--email',
        options.adminEmail,
        '--password-stdin',
        '--pull-runtime',
      ],
      `${secrets.admin_password}\n`,
    );
    const routerArgs =
      replicas > 1 ? ['--routers', String(replicas), '--router-ports', ports.consoleRouter.join(',')] : [];
    options.write(`[dev-stack]        svc runtime up${routerArgs.length ? ` ${routerArgs.join(' ')}` : ''}`);
    runtime = group.start(
      'svc-runtime',
      svc.bin,
      {
        ...svc.env(),
        // The hub announces route changes on the stack's Redis: every console router reloads at once.
        CONSOLE_ROUTER_REDIS_URL: options.redisUrl,
        CONSOLE_ROUTER_REDIS_PREFIX: options.queuePrefix,
      },
      onExit,
      ['runtime', 'up', '--expected-workspace', bootstrapped.workspace.slug, ...routerArgs],
    );
    await unlessOneExits(
      Promise.all([
        waitUntilReady(runtime.process, urls.relay),
        waitUntilReady(runtime.process, urls.consoleRouter),
        ...ports.consoleRouter.map((port) => waitUntilReady(runtime!.process, local(port))),
        heartbeatSent(svc),
      ]),
    );
    options.write(`[dev-stack]        svc start --name ${DEV_AGENT_NAME}`);
    agentStarted = true;
    const started = await unlessOneExits(
      svc.run<{ agent_id: string; name: string; console_url: string | null }>([
        'start',
        '--name',
        DEV_AGENT_NAME,
        '--project',
        seeded.project.code,
        '--capabilities',
        DEV_AGENT_CAPABILITIES.join(','),
        '--model',
        DEV_AGENT_MODEL,
        '--serve-port',
        String(options.agentServePort),
      ]),
    );
    const consoleUrl = `${urls.consoleRouter}/${bootstrapped.workspace.slug}/agents/${started.agent_id}`;
    await unlessOneExits(waitForConsoleRoute(`${consoleUrl}/global/health`));

    // The control web app, at a loopback origin the console router accepts for terminal WebSockets. Its
    // session key is made anew at each start: a restart of the stack signs the browser out.
    const controlWeb = group.start(
      'control-web',
      app('control-web', 'main.js'),
      {
        CONTROL_WEB_PORT: String(options.ports.controlWeb),
        CONTROL_WEB_HUB_URL: urls.hub,
        CONTROL_WEB_WORKFLOW_URL: urls.workflow,
        CONTROL_WEB_SESSION_KEYS: `dev:${randomBytes(32).toString('base64')}`,
        CONTROL_WEB_CONSOLE_ORIGINS: urls.consoleRouter,
      },
      onExit,
    );
    await unlessOneExits(waitUntilReady(controlWeb.process, urls.controlWeb));

    const file: DevStackFile = {
      hub_url: urls.hub,
      workflow_url: urls.workflow,
      relay_url: urls.relay,
      console_router_url: urls.consoleRouter,
      control_web_url: urls.controlWeb,
      workspace: bootstrapped.workspace,
      project: seeded.project,
      participant: { email: options.adminEmail, password: secrets.admin_password, token: seeded.token },
      api_keys: seeded.keys,
      runtime_host: {
        id: seeded.runtimeHost.id,
        relay_url: urls.relay,
        console_router_url: urls.consoleRouter,
        svc_config_dir: path.join(path.resolve(options.stateDir), 'cli'),
        children_file: path.join(path.resolve(options.stateDir), 'cli', 'run', 'default', 'children.json'),
      },
      console_routers: ports.consoleRouter.map((port, i) => ({
        name: replicas === 1 ? 'console-router' : `console-router-${i + 1}`,
        url: local(port),
      })),
      agent: { id: started.agent_id, name: started.name, console_url: consoleUrl },
    };
    // Every service opened its database with these secrets: the next start from elsewhere can tell.
    await markDatabaseSecrets(options.databaseServerUrl, databases, mark);
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

/**
 * Resolves once `svc runtime up` has delivered a heartbeat to the hub: a direct start needs a spawn-ready host
 * (direct start rule 6).
 */
async function heartbeatSent(svc: SvcCli, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const status = await svc.run<{
        runtime: { heartbeat: { last_ok_at: string | null; last_error: string | null } };
      }>(['internal', 'status']);
      if (status.runtime.heartbeat.last_ok_at) return;
      last = status.runtime.heartbeat.last_error ?? 'no heartbeat yet';
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(1000);
  }
  throw new Error(`svc runtime up sent no heartbeat to the hub within ${timeoutMs / 1000} s (${last})`);
}
