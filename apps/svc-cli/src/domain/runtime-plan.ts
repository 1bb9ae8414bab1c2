import path from 'node:path';
import { CliError, authRequired } from './cli-error';
import type { RouterReplicas } from './router-replicas';
import { relaySpawnEnvironment } from './relay-spawn-environment';
import type { HubApi } from '@svc/contracts';

export type { RouterReplicas } from './router-replicas';
import type { BundleFacts } from './runtime-bundle';
export { bundleFacts } from './runtime-bundle';
export type { BundleFacts } from './runtime-bundle';

/** The pulled runtime config without its secrets (what the profile keeps). */
/**
 * Node options of the relay and the console router processes: a small young generation, so memory after
 * traffic stays near the idle size (docs/benchmarks.md, "Service memory"), as in the images.
 */
export const SERVICE_NODE_OPTIONS = '--max-semi-space-size=4';

export type RuntimeSettings = Omit<HubApi.components['schemas']['RuntimeConfig'], 'auth'>;

/** The runtime secrets a profile keeps in its env file. */
export interface RuntimeSecretValues {
  SVC_RELAY_TOKEN?: string;
  SVC_WORKSPACE_API_KEY?: string;
}

/** The systemd unit an always-on runtime host runs `svc runtime up` under (in the repository and the package). */
export const RUNTIME_SYSTEMD_UNIT = 'infra/systemd/svc-runtime.service';

/** How often the runtime reports its host to the hub. */
export const HEARTBEAT_INTERVAL_MS = 10_000;

/** Grace between SIGTERM and SIGKILL when a supervised process is stopped. */
export const STOP_GRACE_MS = 10_000;

const INSTANCE_ID = /^rti_[A-Za-z0-9_-]{1,100}$/;

export interface RuntimeIdentityInput {
  profileName: string;
  hubUrl: string | undefined;
  workspace: string | undefined;
  runtime: RuntimeSettings | undefined;
  secrets: RuntimeSecretValues;
  /** `SVC_RUNTIME_INSTANCE_ID` and `SVC_WORKSPACE_API_KEY` / `SVC_RELAY_TOKEN` from the environment. */
  env: { SVC_RUNTIME_INSTANCE_ID?: string; SVC_WORKSPACE_API_KEY?: string; SVC_RELAY_TOKEN?: string };
  bundle: BundleFacts | null;
  expectedWorkspace: string | undefined;
}

/** Who this runtime is: hub, workspace, host inventory id, and its credentials. */
export interface RuntimeIdentity {
  hubUrl: string;
  workspace: string;
  runtimeInstanceId: string;
  bundleId: string | null;
  apiKey: string;
  relayToken: string | null;
  runtime: RuntimeSettings;
}

/** Refuses a runtime bundle id (`wrt_…`) or anything else that is not a host inventory id (`rti_…`). */
export function assertInventoryId(value: string, source: string): string {
  if (value.startsWith('wrt_')) {
    throw new CliError({
      code: 'runtime_bundle_id_not_allowed',
      message: `${source} is a runtime bundle id (${value}); the runtime needs the host inventory id (rti_…)`,
      fix: 'set SVC_RUNTIME_INSTANCE_ID to the rti_… id the Networks view shows for this host (never the wrt_… id of runtime.env)',
    });
  }
  if (!INSTANCE_ID.test(value)) {
    throw new CliError({
      code: 'runtime_instance_id_invalid',
      message: `${source} is not a runtime host inventory id (rti_…)`,
      fix: 'set SVC_RUNTIME_INSTANCE_ID to the rti_… id the Networks view shows for this host',
    });
  }
  return value;
}

/**
 * Decides the runtime's identity from the profile, the environment and an optional bundle. The host id comes
 * from `SVC_RUNTIME_INSTANCE_ID` or the pulled config (they must agree), never from the bundle; the bundle may
 * only fill in the hub URL, workspace and keys the profile lacks, and must be of the same workspace.
 */
export function resolveRuntimeIdentity(input: RuntimeIdentityInput): RuntimeIdentity {
  const { bundle } = input;
  const profile = input.profileName;
  const runtime = input.runtime;
  if (!runtime) {
    throw authRequired(
      `profile "${profile}" has no pulled runtime config`,
      'svc config pull-runtime (or svc login --pull-runtime)',
    );
  }
  const workspace = input.workspace ?? runtime.workspace.slug ?? bundle?.workspace ?? undefined;
  const hubUrl = input.hubUrl ?? bundle?.hub_url ?? undefined;
  if (!hubUrl || !workspace) {
    throw authRequired(
      `profile "${profile}" is not logged in`,
      'svc login --hub-url <url> --workspace <workspace> --pull-runtime',
    );
  }
  if (runtime.workspace.slug !== workspace) {
    throw new CliError({
      code: 'workspace_mismatch',
      message: `the pulled runtime config is of workspace "${runtime.workspace.slug}", the profile of "${workspace}"`,
      fix: 'svc config pull-runtime',
    });
  }
  if (bundle?.workspace && bundle.workspace !== workspace && bundle.workspace !== runtime.workspace.id) {
    throw new CliError({
      code: 'bundle_workspace_mismatch',
      message: `the bundle ${bundle.path} is of workspace "${bundle.workspace}", this profile of "${workspace}"`,
      fix: 'use the runtime.env of this workspace, or another --profile',
    });
  }
  if (input.expectedWorkspace !== undefined) {
    const expected = input.expectedWorkspace;
    const seen = [workspace, bundle?.workspace].filter((w): w is string => !!w);
    const other = seen.find((w) => w !== expected && w !== runtime.workspace.id);
    if (other !== undefined) {
      throw new CliError({
        code: 'workspace_mismatch',
        message: `expected workspace "${expected}", but this runtime is configured for "${other}"`,
        fix: `log this profile in to "${expected}" and pull its runtime config, or fix --expected-workspace`,
        details: { expected_workspace: expected, workspace: other },
      });
    }
  }
  const fromEnv = input.env.SVC_RUNTIME_INSTANCE_ID?.trim() || undefined;
  const pulled = runtime.runtime_instance_id;
  if (fromEnv !== undefined) assertInventoryId(fromEnv, 'SVC_RUNTIME_INSTANCE_ID');
  assertInventoryId(pulled, 'the pulled runtime_instance_id');
  if (fromEnv !== undefined && fromEnv !== pulled) {
    throw new CliError({
      code: 'runtime_instance_id_mismatch',
      message: `SVC_RUNTIME_INSTANCE_ID (${fromEnv}) is not the host the runtime config was pulled for (${pulled})`,
      fix: `svc config pull-runtime for ${fromEnv}, or set SVC_RUNTIME_INSTANCE_ID=${pulled}`,
    });
  }
  const apiKey =
    input.env.SVC_WORKSPACE_API_KEY || input.secrets.SVC_WORKSPACE_API_KEY || bundle?.workspace_api_key;
  if (!apiKey) {
    throw authRequired(
      `profile "${profile}" has no runtime key (SVC_WORKSPACE_API_KEY)`,
      'svc config pull-runtime',
    );
  }
  const relayToken =
    input.env.SVC_RELAY_TOKEN || input.secrets.SVC_RELAY_TOKEN || bundle?.relay_token || null;
  return {
    hubUrl: hubUrl.replace(/\/+$/, ''),
    workspace,
    runtimeInstanceId: fromEnv ?? pulled,
    bundleId: bundle?.bundle_id ?? null,
    apiKey,
    relayToken,
    runtime,
  };
}

/** A loopback URL a local client can reach a service on, whatever address it binds. */
export function localUrl(bindHost: string, port: number): string {
  const host =
    bindHost === '0.0.0.0' || bindHost === ''
      ? '127.0.0.1'
      : bindHost === '::'
        ? '[::1]'
        : bindHost.includes(':')
          ? `[${bindHost}]`
          : bindHost;
  return `http://${host}:${port}`;
}

/** The runtime's own processes: names, entry points, where they listen, their environment. */
export interface ServiceSpec {
  /** `relay`, `console-router`, or `console-router-1` … `console-router-N` when the host runs N routers. */
  name: 'relay' | 'console-router' | `console-router-${number}`;
  argv: string[];
  host: string;
  port: number;
  url: string;
  env: Record<string, string>;
  logFile: string;
}

/** The files `runtime up` keeps in its state directory. */
export function runtimeStateFiles(stateDir: string) {
  return {
    state_dir: stateDir,
    control_socket: path.join(stateDir, 'control.sock'),
    pid_file: path.join(stateDir, 'runtime.pid'),
    children_file: path.join(stateDir, 'children.json'),
    upstream_secret: path.join(stateDir, 'console.secret'),
    /**
     * The runtime key (owner-only), read by the relay and the console router (SVC_WORKSPACE_API_KEY_FILE) at start
     * and again on SIGHUP: a rotated key is written here (atomically) and the two re-read it without a restart.
     */
    runtime_key: path.join(stateDir, 'runtime.key'),
    relay_log: path.join(stateDir, 'relay.log'),
    console_router_log: path.join(stateDir, 'console-router.log'),
    relay_spawn_log: path.join(stateDir, 'relay-spawns.jsonl'),
    /** Present while the hub says the host drains; the relay refuses new spawns then. */
    drain_marker: path.join(stateDir, 'draining'),
  };
}

/** The variables every child of the runtime inherits from it (and nothing else of its environment). */
export function baseEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'TZ']) {
    const value = env[key];
    if (value) out[key] = value;
  }
  if (!out.PATH) out.PATH = '/usr/local/bin:/usr/bin:/bin';
  return out;
}

/** The relay's and the console router's process specs for this host. */
export function serviceSpecs(input: {
  identity: RuntimeIdentity;
  nodePath: string;
  relayMain: string;
  routerMain: string;
  svcEntry: string;
  stateDir: string;
  upstreamSecret: string;
  baseEnv: Record<string, string>;
  logLevel: string;
  /** Where svc keeps its configuration and which profile runs: the relay runs `svc start` with them. */
  configDir: string;
  profile: string;
  /** The host's environment: the relay's spawn settings and the variables spawned agents may keep. */
  hostEnv: NodeJS.ProcessEnv;
  /** The console routers (default: one, on the host's console router port). */
  routers?: RouterReplicas;
}): ServiceSpec[] {
  const { identity, stateDir } = input;
  const files = runtimeStateFiles(stateDir);
  const relay = identity.runtime.relay;
  const router = identity.runtime.consoleRouter;
  const relayEnv: Record<string, string> = {
    ...input.baseEnv,
    LOG_LEVEL: input.logLevel,
    RELAY_HOST: relay.bindHost,
    RELAY_PORT: String(relay.listenPort),
    SVC_HUB_URL: identity.hubUrl,
    SVC_WORKSPACE: identity.workspace,
    SVC_WORKSPACE_API_KEY_FILE: files.runtime_key,
  };
  if (identity.relayToken) relayEnv.SVC_RELAY_TOKEN = identity.relayToken;
  relayEnv.SVC_RELAY_DRAIN_FILE = files.drain_marker;
  Object.assign(
    relayEnv,
    relaySpawnEnvironment({
      runtimeInstanceId: identity.runtimeInstanceId,
      relayPublicUrl: relay.publicUrl,
      svcEntry: input.svcEntry,
      configDir: input.configDir,
      profile: input.profile,
      spawnLog: files.relay_spawn_log,
      hostEnv: input.hostEnv,
    }),
  );
  const routerEnv: Record<string, string> = {
    ...input.baseEnv,
    LOG_LEVEL: input.logLevel,
    CONSOLE_ROUTER_HOST: router.bindHost,
    CONSOLE_ROUTER_PORT: String(router.listenPort),
    HUB_URL: identity.hubUrl,
    SVC_RUNTIME_INSTANCE_ID: identity.runtimeInstanceId,
    SVC_WORKSPACE_API_KEY_FILE: files.runtime_key,
    CONSOLE_ROUTER_PUBLIC_BASE_URL: router.publicBaseUrl,
    CONSOLE_ROUTER_UPSTREAM_SECRET: input.upstreamSecret,
  };
  // Other sites whose pages may open consoles (the control web app), and the services' Redis where the hub
  // announces route changes (decision 73: every router reloads at once), as the host's operator sets them.
  for (const name of [
    'CONSOLE_ROUTER_ALLOWED_ORIGINS',
    'CONSOLE_ROUTER_REDIS_URL',
    'CONSOLE_ROUTER_REDIS_PREFIX',
  ] as const) {
    const value = input.hostEnv[name]?.trim();
    if (value) routerEnv[name] = value;
  }
  const replicas = input.routers ?? { count: 1, ports: [router.listenPort] };
  const routers: ServiceSpec[] = replicas.ports.map((port, i) => {
    const name = replicas.count === 1 ? 'console-router' : (`console-router-${i + 1}` as const);
    return {
      name,
      // A small young generation: after a burst of traffic V8 keeps what it grew, which is most of the router's
      // memory beyond its route table (docs/benchmarks.md, "Console router").
      argv: [input.nodePath, SERVICE_NODE_OPTIONS, input.routerMain],
      host: router.bindHost,
      port,
      url: localUrl(router.bindHost, port),
      env: { ...routerEnv, CONSOLE_ROUTER_PORT: String(port) },
      logFile: replicas.count === 1 ? files.console_router_log : path.join(stateDir, `${name}.log`),
    };
  });
  return [
    {
      name: 'relay',
      argv: [input.nodePath, SERVICE_NODE_OPTIONS, input.relayMain],
      host: relay.bindHost,
      port: relay.listenPort,
      url: localUrl(relay.bindHost, relay.listenPort),
      env: relayEnv,
      logFile: files.relay_log,
    },
    ...routers,
  ];
}

/** What `runtime up --dry-run` prints: no secret values, only variable names. */
export interface RuntimePlan {
  profile: string;
  workspace: string;
  hub_url: string;
  runtime_instance_id: string;
  bundle_id: string | null;
  processes: Array<{
    name: string;
    argv: string[];
    host: string;
    port: number;
    url: string;
    env: string[];
    log_file: string;
  }>;
  /**
   * With more than one console router: the host's console address (its console router port), which the load
   * balancer in front of them must take (the routers listen elsewhere); null with one router.
   */
  console_balancer_url: string | null;
  control_socket: string;
  heartbeat_interval_ms: number;
  state_files: string[];
  agents: { supervised_by: 'control socket'; readopted_on_start: false };
  systemd_unit: string;
}

export function runtimePlan(input: {
  profile: string;
  identity: RuntimeIdentity;
  services: ServiceSpec[];
  stateDir: string;
}): RuntimePlan {
  const files = runtimeStateFiles(input.stateDir);
  return {
    profile: input.profile,
    workspace: input.identity.workspace,
    hub_url: input.identity.hubUrl,
    runtime_instance_id: input.identity.runtimeInstanceId,
    bundle_id: input.identity.bundleId,
    processes: input.services.map((s) => ({
      name: s.name,
      argv: s.argv,
      host: s.host,
      port: s.port,
      url: s.url,
      env: Object.keys(s.env).sort(),
      log_file: s.logFile,
    })),
    console_balancer_url:
      input.services.filter((s) => s.name.startsWith('console-router')).length > 1
        ? localUrl(
            input.identity.runtime.consoleRouter.bindHost,
            input.identity.runtime.consoleRouter.listenPort,
          )
        : null,
    control_socket: files.control_socket,
    heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
    state_files: [
      files.pid_file,
      files.upstream_secret,
      files.runtime_key,
      files.relay_log,
      ...input.services.filter((s) => s.name !== 'relay').map((s) => s.logFile),
      files.control_socket,
    ],
    agents: { supervised_by: 'control socket', readopted_on_start: false },
    systemd_unit: RUNTIME_SYSTEMD_UNIT,
  };
}
