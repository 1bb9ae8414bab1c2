/**
 * `svc runtime up`: start, supervise and stop a runtime host. One file because its start, its loop (heartbeats,
 * key following, readiness) and its stop share one set of processes and one state, closed over here.
 */
import { deriveConsoleProxyKey } from '@svc/auth';
import { createHubClient } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { AgentSupervisor } from '../../data/agent-supervisor';
import { listAgentStates } from '../../data/agent-state';
import { startControlServer } from '../../data/control-server';
import type { RuntimeControlStatus } from '../../data/control-server';
import { ManagedProcess } from '../../data/managed-process';
import { createRuntimeControlClient } from '../../data/runtime-control-client';
import { acquirePidLock, ensureUpstreamSecret } from '../../data/runtime-files';
import { readinessReport, readServiceReadiness, sendHeartbeat } from '../../data/runtime-heartbeat';
import type { ProfileStore } from '../../data/profile-store';
import { runtimeKeyNotice } from '../../domain/runtime-key-notice';
import { followRuntimeKey } from './follow-runtime-key';
import { createHostDrainFollower } from './follow-host-drain';
import type { ServiceReadiness } from '../../data/runtime-heartbeat';
import { ensureOwnerOnlyDir, writeSecretFile } from '../../data/secret-files';
import { serviceEntryPoints } from '../../data/service-entry-points';
import { ChildRegistry, stopLeftoverChildren } from '@svc/service-kit/child-registry';
import { TunnelConnector } from '../../data/tunnel-connector';
import { watchTerminalOutput } from '../../data/terminal-output';
import { post } from '../../data/local-service-probe';
import { CliError } from '../../domain/cli-error';
import {
  baseEnvironment,
  HEARTBEAT_INTERVAL_MS,
  runtimeStateFiles,
  serviceSpecs,
  STOP_GRACE_MS,
} from '../../domain/runtime-plan';
import type { RouterReplicas, RuntimeIdentity, ServiceSpec } from '../../domain/runtime-plan';

export interface RunRuntimeHostInput {
  profile: string;
  stateDir: string;
  /** svc's configuration directory (the relay runs `svc start` against it for spawns). */
  configDir: string;
  identity: RuntimeIdentity;
  /** The console routers to run (default: one, on the host's console router port). */
  routers?: RouterReplicas;
  cliVersion: string;
  clientName: string;
  env: NodeJS.ProcessEnv;
  /**
   * Where the runtime's own lines go (never a secret), each stamped with the time: stdout, or stderr when stdout
   * carries the `--json` summary. When a write to stdout or stderr fails (the terminal or the reader went away),
   * nothing more is written there and the runtime stops as on SIGHUP.
   */
  logTo: 'stdout' | 'stderr';
  /** Shows a spinner around a wait. */
  progress: <R>(label: string, work: () => Promise<R>) => Promise<R>;
  /** How long to wait for the relay and the router to report ready before going on (not ready) anyway. */
  readyTimeoutMs?: number;
  /**
   * The profile whose runtime key the runtime follows: when `svc config pull-runtime` writes a new key for this
   * host, the runtime switches to it without a restart. Left out when the key comes from the environment.
   */
  keyProfile?: ProfileStore;
}

export interface RuntimeRunSummary {
  runtime_instance_id: string;
  workspace: string;
  started_at: string;
  stopped_at: string;
  /** The signal that stopped the runtime. */
  signal: string;
  /** Agents that were running and were stopped (and marked stopped at the hub). */
  stopped_agents: Array<{ name: string; agent_id: string; hub_stopped: boolean }>;
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

async function refuseWhenRunning(socketPath: string, profile: string): Promise<void> {
  const client = createRuntimeControlClient(socketPath, 2_000);
  try {
    const { data } = await client.GET('/status');
    if (data) {
      throw new CliError({
        code: 'runtime_already_running',
        message: `svc runtime up already runs for profile "${profile}" (pid ${data.pid})`,
        fix: 'stop it first, or use it: svc internal status',
        details: { pid: data.pid },
      });
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    // nothing answers on the socket: a stale socket, removed when the control API starts
  }
}

/** Ends a drain of this host at the hub (a fresh start takes work again); says so when there was one. */
async function resumeHost(hub: HubClient, hostId: string, log: (line: string) => void): Promise<void> {
  try {
    const res = await hub.POST('/api/v1/runtime-hosts/{hostId}/resume', {
      params: { path: { hostId } },
      signal: AbortSignal.timeout(10_000),
    });
    if (!res.data) log(`drain: the hub did not end the host's drain (HTTP ${res.response.status})`);
  } catch {
    log("drain: the hub could not be reached to end the host's drain; the next start tries again");
  }
}

/**
 * Runs the runtime host in the foreground until SIGTERM, SIGINT or SIGHUP: the relay and the console router
 * (restarted with back-off when they crash), heartbeats of the host to the hub every ~10 s, the control API on
 * the profile's Unix socket and the supervision of the agents handed over through it. On a stop signal it stops
 * the agents (marking them stopped at the hub), then the router and the relay, removes the socket and returns.
 *
 * Agents with local state from before a restart of the runtime are not re-adopted: their tokens may have
 * expired and a hub start must issue new ones, so they are listed with the command that starts them again
 * (`svc start`).
 */
export async function runRuntimeHost(input: RunRuntimeHostInput): Promise<RuntimeRunSummary> {
  const files = runtimeStateFiles(input.stateDir);
  await ensureOwnerOnlyDir(input.stateDir);
  await refuseWhenRunning(files.control_socket, input.profile);
  const releaseLock = await acquirePidLock(files.pid_file, input.profile);
  const cleanups: Array<() => Promise<void>> = [releaseLock];
  try {
    return await runLocked(input, files, cleanups);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

async function runLocked(
  input: RunRuntimeHostInput,
  files: ReturnType<typeof runtimeStateFiles>,
  cleanups: Array<() => Promise<void>>,
): Promise<RuntimeRunSummary> {
  const { identity } = input;
  const output = watchTerminalOutput();
  const log = (line: string) => output.write(input.logTo, `${new Date().toISOString()} ${line}\n`);
  const startedAt = new Date().toISOString();
  // What a runtime that was killed left running goes first (it would hold the ports and answer for ours).
  await stopLeftoverChildren(files.children_file, STOP_GRACE_MS, log);
  const children = new ChildRegistry(files.children_file);
  // Runs after every child has stopped (cleanups run last first).
  cleanups.push(() => children.clear());
  // SVC_CONSOLE_SECRET (the host's console secret, as `svc start` also reads it) wins over the generated one.
  const fromEnv = input.env.SVC_CONSOLE_SECRET;
  const upstreamSecret =
    fromEnv && fromEnv.length >= 32 ? fromEnv : await ensureUpstreamSecret(files.upstream_secret);
  const baseEnv = baseEnvironment(input.env);
  const specs = serviceSpecs({
    identity,
    nodePath: process.execPath,
    ...serviceEntryPoints(),
    stateDir: input.stateDir,
    upstreamSecret,
    baseEnv,
    logLevel: input.env.LOG_LEVEL || 'info',
    configDir: input.configDir,
    profile: input.profile,
    hostEnv: input.env,
    ...(input.routers ? { routers: input.routers } : {}),
  });
  const [relaySpec, ...routerSpecs] = specs as [ServiceSpec, ...ServiceSpec[]];
  const routerUrls = routerSpecs.map((spec) => spec.url);
  // The runtime key can change while the runtime runs (a re-pull on this host): every call reads the current one.
  let apiKey = identity.apiKey;
  const hub = createHubClient({ baseUrl: identity.hubUrl, clientName: input.clientName });
  hub.use({
    onRequest({ request }) {
      request.headers.set('x-api-key', apiKey);
      return request;
    },
  });

  // Every router reloads its table at once (a router that is down reads it when it starts again).
  const refreshRoutes = () => {
    for (const spec of routerSpecs) {
      void post(`${spec.url}/routes/refresh`).then((res) => {
        if (!res.ok) log(`${spec.name}: route refresh answered ${res.detail ?? 'not ok'}`);
      });
    }
  };
  const supervisor = new AgentSupervisor({
    stateDir: input.stateDir,
    baseEnv,
    consoleProxyKey: (agentId) => deriveConsoleProxyKey(upstreamSecret, agentId),
    onRoutesChanged: refreshRoutes,
    graceMs: STOP_GRACE_MS,
    log,
    registry: children,
  });

  const services = specs.map(
    (spec) =>
      new ManagedProcess({
        name: spec.name,
        argv: spec.argv,
        cwd: input.stateDir,
        env: spec.env,
        logFile: spec.logFile,
        restart: 'always',
        canGiveUp: false,
        log,
        registry: children,
      }),
  );
  const [relay, ...routers] = services as [ManagedProcess, ...ManagedProcess[]];

  let readiness: ServiceReadiness = {
    relay: { ready: false, detail: 'not started' },
    console_router: { ready: false, detail: 'not started' },
    console_routers: routers.map(() => ({ ready: false, detail: 'not started' })),
    console_routes: [],
  };
  const heartbeat = {
    interval_ms: HEARTBEAT_INTERVAL_MS,
    last_ok_at: null as string | null,
    last_error: null as string | null,
  };

  const status = async (): Promise<RuntimeControlStatus> => {
    const live = await readServiceReadiness(relaySpec.url, routerUrls);
    const state = (
      proc: ManagedProcess,
      spec: ServiceSpec,
      r: { ready: boolean; detail: string | null },
    ) => ({
      url: spec.url,
      pid: proc.pid,
      ready: proc.running() && r.ready,
      detail: proc.running() ? r.detail : `${proc.state}`,
    });
    return {
      pid: process.pid,
      started_at: startedAt,
      profile: input.profile,
      workspace: identity.workspace,
      runtime_instance_id: identity.runtimeInstanceId,
      relay: state(relay, relaySpec, live.relay),
      console_router: state(routers[0]!, routerSpecs[0]!, live.console_routers[0]!),
      console_routers: routers.map((router, i) => ({
        name: routerSpecs[i]!.name,
        ...state(router, routerSpecs[i]!, live.console_routers[i]!),
      })),
      heartbeat: { ...heartbeat },
      agents: supervisor.list(),
    };
  };

  const drain = createHostDrainFollower({
    supervisor,
    hub,
    markerFile: files.drain_marker,
    clientName: input.clientName,
    log,
  });
  // A fresh start is a clean start: a drain (finished or not) or a crash before it leaves nothing behind.
  await drain.clear();
  await resumeHost(hub, identity.runtimeInstanceId, log);

  const control = await startControlServer({ socketPath: files.control_socket, supervisor, status });
  cleanups.push(() => control.close());
  cleanups.push(async () => {
    await supervisor.stopAll();
    await Promise.all(services.map((s) => s.stop(STOP_GRACE_MS)));
  });

  // Stop signals are caught from here on: a signal during start-up stops cleanly too.
  let stopSignal: string | undefined;
  let wake: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal) {
      log(`${signal}: already stopping`);
      return;
    }
    stopSignal = signal;
    log(`${signal}: stopping the runtime`);
    wake();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  cleanups.push(async () => {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
  });
  // A terminal that goes away may close stdout before SIGHUP arrives (or never send it, to a process that is
  // not in its foreground group): a failed write stops the runtime as SIGHUP does.
  void output.gone.then(() => onSignal('SIGHUP'));

  // The relay and the router read the runtime key from this owner-only file (at start, and on SIGHUP after a switch).
  await writeSecretFile(files.runtime_key, `${apiKey}\n`);
  for (const service of services) await service.start();
  log(`relay: pid ${relay.pid}, ${relaySpec.url}`);
  if (routers.length === 1) log(`console router: pid ${routers[0]!.pid}, ${routerSpecs[0]!.url}`);
  else {
    routers.forEach((router, i) => log(`${routerSpecs[i]!.name}: pid ${router.pid}, ${routerSpecs[i]!.url}`));
    const router = identity.runtime.consoleRouter;
    log(
      `console routers: ${routers.length}; the host's console address (port ${router.listenPort}) is the load balancer's in front of them (infra/load-balancer/haproxy.cfg)`,
    );
  }
  // The host's tunnel connector (cloudflared), when its runtime environment has a Cloudflare tunnel.
  const connector = new TunnelConnector({
    hub,
    hostId: identity.runtimeInstanceId,
    stateDir: input.stateDir,
    env: input.env,
    baseEnv,
    log,
    stopGraceMs: STOP_GRACE_MS,
    registry: children,
  });
  cleanups.push(() => connector.stop());
  await connector.check();

  const readyTimeoutMs = input.readyTimeoutMs ?? 90_000;
  const ready = await input.progress('Waiting for the relay and the console router to be ready', async () => {
    const deadline = Date.now() + readyTimeoutMs;
    while (!stopSignal) {
      readiness = await readServiceReadiness(relaySpec.url, routerUrls);
      // At start every router is waited for; afterwards the host serves consoles while one of them does.
      if (readiness.relay.ready && readiness.console_routers.every((r) => r.ready)) return true;
      if (Date.now() > deadline) return false;
      await Promise.race([new Promise((r) => setTimeout(r, 250)), stopped]);
    }
    return false;
  });
  if (!ready && !stopSignal) {
    const why = [
      readiness.relay.ready ? null : `relay: ${readiness.relay.detail ?? 'not ready'}`,
      readiness.console_router.ready
        ? null
        : `console router: ${readiness.console_router.detail ?? 'not ready'}`,
    ].filter(Boolean);
    log(
      `not ready after ${Math.round(readyTimeoutMs / 1000)} s (${why.join('; ')}); heartbeats report it until it is`,
    );
  }

  let lastKeyNotice: string | null = null;
  const noteKey = (line: string | null) => {
    if (line && line !== lastKeyNotice) log(line);
    lastKeyNotice = line;
  };
  const beat = async () => {
    await connector.check();
    readiness = await readServiceReadiness(relaySpec.url, routerUrls);
    const result = await sendHeartbeat(hub, identity.runtimeInstanceId, {
      ...readinessReport(relay, routers, readiness),
      runtime_version: input.cliVersion,
      ...(identity.bundleId ? { bundle_id: identity.bundleId } : {}),
      console_routes: readiness.console_routes,
      ...(connector.reported ? { tunnel_connector_ready: await connector.ready() } : {}),
    });
    const { error } = result;
    if (error) {
      const keyLine = runtimeKeyNotice(undefined, result.status);
      if (keyLine) noteKey(keyLine);
      else if (error !== heartbeat.last_error) log(`heartbeat: ${error}`);
      heartbeat.last_error = error;
    } else {
      if (heartbeat.last_error) log('heartbeat: the hub answers again');
      heartbeat.last_ok_at = new Date().toISOString();
      heartbeat.last_error = null;
      noteKey(runtimeKeyNotice(result.runtimeKey));
      // A tunnel deleted or replaced since the connector started: it stops (a new one starts at the next check).
      await connector.follow(result.tunnel);
      // An agent the drain stopped: report at once, so the hub sees the host drained without waiting a beat.
      if (await drain.follow(result.drain)) await beat();
    }
  };

  // A re-pull of this profile on this host: the runtime switches to the new key without a restart.
  const stopFollowing = input.keyProfile
    ? await followRuntimeKey({
        profile: input.keyProfile,
        runtimeInstanceId: identity.runtimeInstanceId,
        current: () => apiKey,
        use: (key) => {
          apiKey = key;
          lastKeyNotice = null;
        },
        handOver: async (key) => {
          // Written whole (temporary file, then rename) before either reads it; a process restarted after a crash
          // reads it at start.
          await writeSecretFile(files.runtime_key, `${key}\n`);
          for (const proc of [relay, ...routers]) proc.signalProcess('SIGHUP');
        },
        stopping: () => stopSignal !== undefined,
        log,
      })
    : async () => undefined;
  cleanups.push(stopFollowing);

  let beating = Promise.resolve();
  const timer = setInterval(() => {
    beating = beating.then(beat);
  }, HEARTBEAT_INTERVAL_MS);
  cleanups.push(async () => clearInterval(timer));
  if (!stopSignal) {
    beating = beat();
    await beating;
    log(
      `runtime ${identity.runtimeInstanceId} of workspace ${identity.workspace} is up; control socket ${files.control_socket}`,
    );
    for (const local of await listAgentStates(input.stateDir).catch(() => [])) {
      log(
        `agent ${local.name} has local state but is not running here; start it again: svc start --name ${local.name}`,
      );
    }
  }

  await stopped;
  clearInterval(timer);
  await stopFollowing();
  await beating.catch(() => undefined);

  const handed = await supervisor.stopAll();
  const stoppedAgents: RuntimeRunSummary['stopped_agents'] = [];
  for (const agent of handed) {
    let hubStopped: boolean;
    try {
      const res = await hub.POST('/api/v1/agents/{agentId}/stop', {
        params: { path: { agentId: agent.agent_id } },
        signal: AbortSignal.timeout(10_000),
      });
      hubStopped = res.response.ok;
      if (!hubStopped)
        log(`agent ${agent.name}: the hub did not mark it stopped (HTTP ${res.response.status})`);
    } catch {
      hubStopped = false;
      log(`agent ${agent.name}: the hub could not be reached to mark it stopped`);
    }
    stoppedAgents.push({ ...agent, hub_stopped: hubStopped });
  }
  await Promise.all(routers.map((router) => router.stop(STOP_GRACE_MS)));
  await relay.stop(STOP_GRACE_MS);
  await sendHeartbeat(hub, identity.runtimeInstanceId, {
    relay_ready: false,
    console_router_ready: false,
    runtime_version: input.cliVersion,
    ...(identity.bundleId ? { bundle_id: identity.bundleId } : {}),
  });
  await control.close();
  log('runtime stopped');
  return {
    runtime_instance_id: identity.runtimeInstanceId,
    workspace: identity.workspace,
    started_at: startedAt,
    stopped_at: new Date().toISOString(),
    signal: stopSignal ?? 'SIGTERM',
    stopped_agents: stoppedAgents,
  };
}
