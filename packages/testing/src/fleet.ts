/**
 * One file because the fleet's start, its faults (kill, drain, key rotation) and its stop share one set of
 * processes, namespaces and clients, closed over here.
 *
 * A runtime fleet on one machine (decision 86): N runtime hosts, each in a network namespace of its own (see
 * `fleet-network.ts`) with its own configuration directory and `svc runtime up` (relay, console router,
 * agents), against one hub and one Workflow API that listen on the fleet's bridge. Runs go through the real
 * engine to the hosts' reference agents. Without root, the hosts share the root namespace (`netns: false`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKFLOW_SCOPES } from '@svc/auth';
import { createWorkflowClient, unwrap } from '@svc/contracts';
import type { HubClient, WorkflowClient } from '@svc/contracts';
import {
  acquireFleetNetwork,
  createFleetNetwork,
  FLEET_NETWORK,
  namespacePids,
  removeFleetNetwork,
} from './fleet-network';
import type { FleetNamespace } from './fleet-network';
import {
  APP_DIRS,
  bootstrapHubWorkspace,
  createHubDatabase,
  createWorkflowDatabase,
  newServiceToken,
  signInHubOwner,
  startHub,
  startWorkflowApi,
  startWorkflowWorker,
  workflowEnv,
} from './platform';
import type { HubOwner } from './platform';
import { eventually, freePort, startBuiltEntryPoint } from './process';
import type { NodeProcess } from './process';
import { obliterateQueues, uniqueQueuePrefix } from './queues';
import { REPORT_SCHEMA } from './runtime';
import { testRedisUrl } from './servers';

const SVC_DIR = path.join(APP_DIRS.hub, '..', 'svc-cli');
const SVC_BIN = path.join(SVC_DIR, 'bin', 'run.js');
/** The capability the fleet's stages need and its agents have. */
export const FLEET_CAPABILITY = 'fleet';
const FLEET_INTENT = 'fleet soak report';
/** Engine timings for a fleet: a dead owner's stage is released after 10 s without a stage heartbeat. */
const FLEET_ENGINE_ENV = {
  WORKFLOW_STAGE_STALL_SECONDS: '10',
  WORKFLOW_SWEEP_INTERVAL_MS: '500',
  WORKFLOW_OUTBOX_REDELIVER_MS: '1500',
  WORKFLOW_RECHECK_MS: '1000',
  WORKFLOW_JOB_LOCK_MS: '5000',
};

export interface FleetHost {
  index: number;
  id: string;
  name: string;
  /** Its network namespace (null when the fleet runs without namespaces). */
  namespace: FleetNamespace | null;
  home: string;
  configDir: string;
  agentName: string;
  agentId: string;
  /** The port its relay listens on, on the loopback of its namespace. */
  relayPort: number;
  /** `svc runtime up` (null after a kill until a restart). */
  runtime: NodeProcess | null;
  /** Starts `svc runtime up` on the host and waits for its first heartbeat (a restart after a stop or a kill). */
  startRuntime(): Promise<void>;
  /** Runs `svc <args> --json` on the host (in its namespace) and returns the envelope's result. */
  svc<T>(args: string[], input?: string): Promise<T>;
}

export interface FleetOptions {
  hosts: number;
  /** Each host in a namespace of its own (default true; needs root). */
  netns?: boolean;
  /** How long each stage takes on an agent (default 0). */
  stageDelayMs?: number;
  /** Where progress lines go (default nowhere). */
  log?: (line: string) => void;
}

export interface FleetRun {
  id: string;
  state: string;
  /** Each stage's owner when it completed (or now), in order. */
  owners: Array<string | null>;
  stageStates: string[];
  /** When the run's last stage completed (epoch ms; null until the run completed). */
  completedAt: number | null;
}

export interface Fleet {
  hubUrl: string;
  workflowUrl: string;
  /** The Workflow API's database (for the soak's checks of what was completed twice). */
  workflowDatabaseUrl: string;
  owner: HubOwner;
  /** Participant hub client of the workspace's owner. */
  hub: HubClient;
  wf: WorkflowClient;
  project: { id: string; code: string };
  hosts: FleetHost[];
  /** Invokes and launches one run of the fleet's two-stage route. */
  launchRun(): Promise<string>;
  readRun(id: string): Promise<FleetRun>;
  /** SIGKILL of every process of the host (its runtime, relay, router and agents). */
  killHost(host: FleetHost): Promise<number>;
  /** `svc runtime drain` on the host; with `wait`, until the hub says drained. */
  drainHost(host: FleetHost, wait?: boolean): Promise<{ state: string; waited_seconds: number | null }>;
  /** `svc config pull-runtime --rotate-key` on the host (the running runtime switches keys by itself). */
  rotateKey(host: FleetHost): Promise<void>;
  /** Heartbeats the host's runtime reported as failed (its `heartbeat:` lines). */
  failedHeartbeats(host: FleetHost): number;
  /**
   * What breaks the hosts' isolation, in words (empty when none): a runtime not in its own namespace, or a
   * relay the root namespace reaches on its loopback (each relay listens on its namespace's loopback only).
   */
  isolationProblems(): Promise<string[]>;
  /** The drain state the hub shows for a host. */
  drainState(host: FleetHost): Promise<string>;
  close(): Promise<void>;
}

function handlerModule(dir: string, delayMs: number): string {
  const file = path.join(dir, 'fleet-stage-handler.cjs');
  const defaultHandler = path.join(APP_DIRS.referenceAgent, 'dist', 'domain', 'default-stage-handler.js');
  writeFileSync(
    file,
    `const { defaultStageHandler } = require(${JSON.stringify(defaultHandler)});
module.exports = async (ctx) => {
  await new Promise((resolve) => setTimeout(resolve, ${Math.max(0, Math.floor(delayMs))}));
  return defaultStageHandler(ctx);
};
`,
  );
  return file;
}

/** Starts a fleet of `hosts` runtime hosts with one agent each; see the file's comment. */
export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const log = options.log ?? (() => undefined);
  const useNetns = options.netns ?? true;
  // One fleet network per machine: a second fleet (another test file) waits for the first to close.
  const release = useNetns ? await acquireFleetNetwork() : null;
  const namespaces = useNetns ? createFleetNetwork(options.hosts) : null;
  const onExit = () => {
    if (namespaces) removeFleetNetwork();
    release?.();
  };
  if (namespaces) process.once('exit', onExit);
  const bind = namespaces ? FLEET_NETWORK.gateway : '127.0.0.1';
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-fleet-')));
  const handler = handlerModule(root, options.stageDelayMs ?? 0);
  const processes: NodeProcess[] = [];
  const redisUrl = testRedisUrl();
  const queuePrefix = uniqueQueuePrefix('svcfleet');
  const serviceToken = newServiceToken();
  const [hubDb, wfDb] = await Promise.all([createHubDatabase(), createWorkflowDatabase()]);

  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    if (namespaces) {
      removeFleetNetwork();
      process.off('exit', onExit);
    }
    release?.();
    await obliterateQueues(redisUrl, queuePrefix, ['workflow-reconcile', 'workflow-delivery']).catch(
      () => undefined,
    );
    await Promise.all([hubDb.drop(), wfDb.drop()]).catch(() => undefined);
    rmSync(root, { recursive: true, force: true });
  };
  cleanups.push(async () => {
    await Promise.all(processes.map((p) => (p.running() ? p.stop('SIGTERM', 20_000) : Promise.resolve(0))));
  });

  try {
    log(`fleet: hub and Workflow API on ${bind}`);
    const hub = await startHub({
      databaseUrl: hubDb.url,
      serviceToken,
      host: bind,
      env: { HUB_MANAGED_PROVIDERS: 'local', HUB_REDIS_URL: redisUrl, HUB_REDIS_PREFIX: queuePrefix },
    });
    processes.push(hub.process);
    const wfEnv = await workflowEnv({
      databaseUrl: wfDb.url,
      redisUrl,
      queuePrefix,
      hubUrl: hub.url,
      serviceToken,
      host: bind,
      env: { WORKFLOW_DB_POOL_SIZE: '5', ...FLEET_ENGINE_ENV },
    });
    processes.push(await startWorkflowApi(wfEnv), await startWorkflowWorker(wfEnv));

    const email = 'owner@fleet.test';
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const workspace = await bootstrapHubWorkspace({ databaseUrl: hubDb.url, slug: 'fleet', email, password });
    const owner = await signInHubOwner(hub.url, workspace, email, password);
    const project = await owner.createProject('FLEET', 'Fleet');
    const apiKey = await owner.createApiKey([...WORKFLOW_SCOPES], 'fleet runs');
    const wf = createWorkflowClient({ baseUrl: wfEnv.url, apiKey });
    unwrap(
      await wf.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
        params: { path: { workspaceId: workspace.id } },
        body: { project_id: project.id, name: 'fleet-report', version: '1.0.0', json_schema: REPORT_SCHEMA },
      }),
    );
    unwrap(
      await wf.POST('/api/v1/projects/{projectId}/workflow/contracts', {
        params: { path: { projectId: project.id } },
        body: {
          name: 'Fleet',
          priority: 10,
          fallback: false,
          is_active: true,
          classifier: { intentContains: [FLEET_INTENT] },
          template: {
            key: 'fleet',
            version: '1.0.0',
            required_capabilities: [],
            artifact_schema: { name: 'fleet-report', version: '1.0.0' },
            guardrails: { human_approval_required: false },
            stages: [
              { key: 'draft', title: 'Draft', required_capabilities: [FLEET_CAPABILITY] },
              { key: 'final', title: 'Final', required_capabilities: [FLEET_CAPABILITY] },
            ],
          },
        },
      }),
    );

    // Hosts are registered one after the other, then brought up side by side.
    const bringUp = async (index: number): Promise<FleetHost> => {
      const namespace = namespaces?.[index - 1] ?? null;
      const home = path.join(root, `h${index}`);
      const workdirRoot = path.join(home, 'agents');
      mkdirSync(workdirRoot, { recursive: true, mode: 0o700 });
      const [relayPort, routerPort] = [await freePort(), await freePort()];
      const name = `fleet-h${index}`;
      const registered = unwrap(
        await owner.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
          params: { path: { workspace: workspace.slug } },
          body: {
            name,
            workdir_root: workdirRoot,
            console_public_base_url: `http://127.0.0.1:${routerPort}`,
            console_router: { bind_host: '127.0.0.1', listen_port: routerPort },
            relay: { bind_host: '127.0.0.1', listen_port: relayPort },
          },
        }),
      );
      const configDir = path.join(home, 'cli');
      const env = {
        HOME: home,
        NO_COLOR: '1',
        SVC_CONFIG_DIR: configDir,
        SVC_RUNTIME_INSTANCE_ID: registered.host.id,
        SVC_AGENT_WORKDIR_ROOT: workdirRoot,
        SVC_WORKFLOW_URL: wfEnv.url,
        SVC_AGENT_HANDLER: handler,
      };
      const svc = async <T>(args: string[], input?: string): Promise<T> => {
        const proc = startBuiltEntryPoint(SVC_DIR, SVC_BIN, env, {
          name: `svc ${args[0]} (${name})`,
          args: [...args, '--json'],
          ...(namespace ? { wrap: namespace.wrap } : {}),
          ...(input === undefined ? {} : { input }),
        });
        const code = await proc.exited;
        let envelope: { ok?: boolean; result?: T; error?: { code?: string; message?: string } };
        try {
          envelope = JSON.parse(proc.stdout()) as typeof envelope;
        } catch {
          throw new Error(`svc ${args.join(' ')} on ${name}: exit ${code}: ${proc.stderr().slice(-500)}`);
        }
        if (code === 0 && envelope.ok) return envelope.result as T;
        throw new Error(
          `svc ${args.join(' ')} on ${name}: ${envelope.error?.message ?? `exit ${code}`} [${envelope.error?.code ?? '-'}]`,
        );
      };
      const host: FleetHost = {
        index,
        id: registered.host.id,
        name,
        namespace,
        home,
        configDir,
        agentName: `fleet-agent-${index}`,
        agentId: '',
        relayPort,
        runtime: null,
        svc,
        startRuntime: async () => undefined,
      };
      log(
        `fleet: ${name} (${registered.host.id})${namespace ? ` in ${namespace.name} at ${namespace.address}` : ''}`,
      );
      await svc(
        [
          'login',
          '--hub-url',
          hub.url,
          '--workspace',
          workspace.slug,
          '--email',
          email,
          '--password-stdin',
          '--pull-runtime',
        ],
        `${password}\n`,
      );
      host.startRuntime = async () => {
        const runtime = startBuiltEntryPoint(SVC_DIR, SVC_BIN, env, {
          name: `svc runtime up (${name})`,
          args: ['runtime', 'up'],
          outputLimit: 200_000,
          ...(namespace ? { wrap: namespace.wrap } : {}),
        });
        host.runtime = runtime;
        processes.push(runtime);
        await eventually(
          async () => {
            if (!runtime.running())
              throw new Error(`svc runtime up exited: ${runtime.output().slice(-2000)}`);
            const status = await svc<{ runtime: { pid: number; heartbeat: { last_ok_at: string | null } } }>([
              'internal',
              'status',
            ]).catch(() => null);
            return (
              (status !== null &&
                status.runtime.pid === runtime.child.pid &&
                status.runtime.heartbeat.last_ok_at) ||
              false
            );
          },
          90_000,
          `${name}: a first heartbeat`,
          { intervalMs: 1000 },
        );
      };
      await host.startRuntime();
      const started = await svc<{ agent_id: string }>([
        'start',
        '--name',
        host.agentName,
        '--project',
        project.code,
        '--capabilities',
        FLEET_CAPABILITY,
        '--model',
        'local/echo',
      ]);
      host.agentId = started.agent_id;
      return host;
    };
    const hosts = await Promise.all(Array.from({ length: options.hosts }, (_, i) => bringUp(i + 1)));

    const fleet: Fleet = {
      hubUrl: hub.url,
      workflowUrl: wfEnv.url,
      workflowDatabaseUrl: wfDb.url,
      owner,
      hub: owner.hub,
      wf,
      project,
      hosts,
      async launchRun() {
        const created = unwrap(
          await wf.POST('/api/v1/projects/{projectId}/workflow/invocations', {
            params: { path: { projectId: project.id }, header: { 'Idempotency-Key': randomUUID() } },
            body: { intent: `${FLEET_INTENT} ${randomUUID().slice(0, 8)}` },
          } as never),
        ) as unknown as { invocation: { invocation_id: string } } | { invocation_id: string };
        const id = 'invocation' in created ? created.invocation.invocation_id : created.invocation_id;
        const launched = await wf.POST(
          '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch',
          {
            params: { path: { projectId: project.id, invocationId: id } },
          },
        );
        if (!launched.response.ok) throw new Error(`launch ${id}: HTTP ${launched.response.status}`);
        return id;
      },
      async readRun(id) {
        const inv = unwrap(
          await wf.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
            params: { path: { projectId: project.id, invocationId: id } },
          }),
        ) as unknown as {
          state: string;
          stages?: Array<{ state: string; owner_agent_id: string | null; completed_at: string | null }>;
        };
        const stages = inv.stages ?? [];
        const completions = stages.flatMap((s) => (s.completed_at ? [Date.parse(s.completed_at)] : []));
        return {
          id,
          state: inv.state,
          owners: stages.map((s) => s.owner_agent_id),
          stageStates: stages.map((s) => s.state),
          completedAt: inv.state === 'completed' && completions.length > 0 ? Math.max(...completions) : null,
        };
      },
      async killHost(host) {
        let killed = 0;
        const pids = host.namespace
          ? namespacePids(host.namespace.name)
          : [host.runtime?.child.pid].filter((p): p is number => typeof p === 'number');
        for (const pid of pids) {
          try {
            process.kill(pid, 'SIGKILL');
            killed += 1;
          } catch {
            // gone already
          }
        }
        if (host.runtime) await host.runtime.exited;
        return killed;
      },
      async drainHost(host, wait = false) {
        const report = await host.svc<{ drain: { state: string }; waited_seconds: number | null }>([
          'runtime',
          'drain',
          ...(wait ? ['--wait', '--timeout', '300'] : []),
        ]);
        return { state: report.drain.state, waited_seconds: report.waited_seconds };
      },
      async rotateKey(host) {
        await host.svc(['config', 'pull-runtime', '--rotate-key']);
      },
      failedHeartbeats(host) {
        const output = host.runtime?.output() ?? '';
        return output.split('\n').filter((line) => /\bheartbeat: (HTTP|the hub did not answer)/.test(line))
          .length;
      },
      async isolationProblems() {
        const problems: string[] = [];
        for (const host of hosts) {
          if (!host.namespace) {
            problems.push(`${host.name} runs in the root namespace`);
            continue;
          }
          const pid = host.runtime?.child.pid;
          if (!pid || !namespacePids(host.namespace.name).includes(pid)) {
            problems.push(`${host.name}: its runtime is not in ${host.namespace.name}`);
          }
          const reached = await fetch(`http://127.0.0.1:${host.relayPort}/healthz`, {
            signal: AbortSignal.timeout(2000),
          }).then(
            async (res) => {
              await res.body?.cancel();
              return true;
            },
            () => false,
          );
          if (reached) problems.push(`${host.name}: its relay answers on the root namespace's loopback`);
        }
        return problems;
      },
      async drainState(host) {
        const res = unwrap(
          await owner.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: host.id } } }),
        );
        return res.drain?.state ?? 'active';
      },
      close,
    };
    return fleet;
  } catch (error) {
    await close();
    throw error;
  }
}
