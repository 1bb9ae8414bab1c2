import path from 'node:path';
import { CliError, authRequired, usageError } from './cli-error';
import { relaySpawnEnvironment } from './relay-spawn-environment';
import type { HubApi } from '@svc/contracts';

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
const BUNDLE_ID = /^wrt_[A-Za-z0-9]{1,60}$/;

/** What a runtime bundle's `runtime.env` carries, as far as `runtime up` uses it. Its bundle id is never a host id. */
export interface BundleFacts {
  path: string;
  bundle_id: string | null;
  hub_url: string | null;
  workspace: string | null;
  workspace_api_key: string | null;
  relay_token: string | null;
}

/** Reads the facts of a parsed `runtime.env`; values may be quoted, names with or without the `SVC_` prefix. */
export function bundleFacts(file: string, values: Record<string, string>): BundleFacts {
  const first = (...keys: string[]) => {
    for (const key of keys) if (values[key]) return values[key]!;
    return null;
  };
  const idKeys = [
    'SVC_RUNTIME_BUNDLE_ID',
    'RUNTIME_BUNDLE_ID',
    'SVC_BUNDLE_ID',
    'BUNDLE_ID',
    'SVC_RUNTIME_INSTANCE_ID',
    'RUNTIME_INSTANCE_ID',
    'RUNTIME_ID',
  ];
  const bundleId = idKeys.map((k) => values[k]).find((v): v is string => !!v && BUNDLE_ID.test(v)) ?? null;
  return {
    path: file,
    bundle_id: bundleId,
    hub_url: first('SVC_HUB_URL', 'HUB_URL'),
    workspace: first('SVC_WORKSPACE', 'WORKSPACE', 'SVC_WORKSPACE_SLUG'),
    workspace_api_key: first('SVC_WORKSPACE_API_KEY', 'WORKSPACE_API_KEY'),
    relay_token: first('SVC_RELAY_TOKEN', 'RELAY_TOKEN'),
  };
}

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

/** The most console routers one runtime runs (`svc runtime up --routers N`). */
export const MAX_CONSOLE_ROUTERS = 8;

/**
 * How many console routers the host runs and where each listens (`--routers N`, `--router-ports a,b,…`, or
 * `SVC_CONSOLE_ROUTERS` / `SVC_CONSOLE_ROUTER_PORTS`; a flag wins over its variable).
 */
export interface RouterReplicas {
  count: number;
  ports: number[];
}

function routerCountOf(raw: string, source: string): number {
  const count = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || count < 1 || count > MAX_CONSOLE_ROUTERS) {
    throw usageError(
      'console_routers_invalid',
      `${source} must be a whole number from 1 to ${MAX_CONSOLE_ROUTERS} (got ${JSON.stringify(raw)})`,
      `pass --routers 2 (or set SVC_CONSOLE_ROUTERS=2)`,
    );
  }
  return count;
}

function routerPortsOf(raw: string, source: string): number[] {
  const parts = raw.split(',').map((p) => p.trim());
  const ports = parts.map(Number);
  if (
    parts.some((p) => !/^\d+$/.test(p)) ||
    ports.some((p) => p < 1 || p > 65_535) ||
    new Set(ports).size !== ports.length ||
    ports.length > MAX_CONSOLE_ROUTERS
  ) {
    throw usageError(
      'console_router_ports_invalid',
      `${source} must be up to ${MAX_CONSOLE_ROUTERS} distinct TCP ports, comma-separated (got ${JSON.stringify(raw)})`,
      'pass e.g. --router-ports 8791,8792',
    );
  }
  return ports;
}

/**
 * Decides the host's console routers. One router (the default) listens on the host's console router port, as
 * the pulled runtime config says. With N > 1 each listens on a port of its own — those of `--router-ports`, else
 * the N ports after the host's console port — and the host's console port is left to the load balancer in front
 * of them (`infra/load-balancer/haproxy.cfg`, backend `console`), which is where the tunnel and the public base
 * URL point.
 */
export function routerReplicas(input: {
  listenPort: number;
  routers?: string | undefined;
  routerPorts?: string | undefined;
  env: { SVC_CONSOLE_ROUTERS?: string | undefined; SVC_CONSOLE_ROUTER_PORTS?: string | undefined };
}): RouterReplicas {
  const countRaw = input.routers ?? (input.env.SVC_CONSOLE_ROUTERS?.trim() || undefined);
  const portsRaw = input.routerPorts ?? (input.env.SVC_CONSOLE_ROUTER_PORTS?.trim() || undefined);
  const countSource = input.routers !== undefined ? '--routers' : 'SVC_CONSOLE_ROUTERS';
  const portsSource = input.routerPorts !== undefined ? '--router-ports' : 'SVC_CONSOLE_ROUTER_PORTS';
  const ports = portsRaw === undefined ? undefined : routerPortsOf(portsRaw, portsSource);
  const count = countRaw === undefined ? (ports?.length ?? 1) : routerCountOf(countRaw, countSource);
  if (ports && ports.length !== count) {
    throw usageError(
      'console_router_ports_invalid',
      `${portsSource} names ${ports.length} port(s) for ${count} console router(s)`,
      'name one port per router, or leave the ports out (then they follow the host console port)',
    );
  }
  if (count === 1) return { count, ports: ports ?? [input.listenPort] };
  const chosen = ports ?? Array.from({ length: count }, (_, i) => input.listenPort + 1 + i);
  if (chosen.includes(input.listenPort) || chosen.some((p) => p > 65_535)) {
    throw usageError(
      'console_router_ports_invalid',
      `with ${count} console routers the host's console port ${input.listenPort} is the load balancer's; the routers need other ports (got ${chosen.join(', ')})`,
      'pass --router-ports with ports other than the host console port',
    );
  }
  return { count, ports: chosen };
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
