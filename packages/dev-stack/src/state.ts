import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processStartTime } from '@svc/service-kit/child-registry';
import { PreflightError } from './preflight';

/**
 * Secrets of the local stack, made once and kept in `.svc/dev-secrets.json` (0600). The runtime host's own
 * secrets (relay token, workspace runtime key, console secret) are not here: `svc login --pull-runtime` and
 * `svc runtime up` keep them in the svc configuration directory, as on any runtime host.
 */
export interface DevSecrets {
  encryption_keys: string;
  service_token: string;
  admin_password: string;
}

/** The file other tools read: exactly the documented shape. */
export interface DevStackFile {
  hub_url: string;
  workflow_url: string;
  relay_url: string;
  console_router_url: string;
  /** The signed-in web application (sign in with `participant`). */
  control_web_url: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  participant: { email: string; password: string; token: string };
  api_keys: { read_only: string; automation: string; agent_runtime: string; workflow_all: string };
  /**
   * This machine as the workspace's runtime host, run by `svc runtime up`: its inventory id, the local relay and
   * console router, and the svc configuration directory (`SVC_CONFIG_DIR` for `svc list`, `svc ask`, …).
   */
  runtime_host: {
    id: string;
    relay_url: string;
    console_router_url: string;
    svc_config_dir: string;
    /**
     * `svc runtime up`'s record of its children (relay, console routers, agents: `name`, `pid`, `started`),
     * rewritten on every start and exit; a router started again after a crash appears there with its new pid.
     */
    children_file: string;
  };
  /**
   * The console routers of the host, each on its own port: one (`console-router`, at `console_router_url`), or
   * with `--replicas N` the N routers (`console-router-1` …) HAProxy balances at `console_router_url`. Their
   * pids are in `runtime_host.children_file` under the same names.
   */
  console_routers: Array<{ name: string; url: string }>;
  /** The development agent, started with `svc start`; `console_url` is its route on the console router. */
  agent: { id: string; name: string; console_url: string };
}

export function writePrivateJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
  chmodSync(file, 0o600);
}

export function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function loadOrCreateSecrets(stateDir: string): DevSecrets {
  const file = path.join(stateDir, 'dev-secrets.json');
  const existing = readJson<Partial<DevSecrets>>(file);
  if (existing?.encryption_keys && existing.service_token && existing.admin_password) {
    // Fields of older files (relay_token, console_secret) are ignored and kept.
    return existing as DevSecrets;
  }
  const secrets: DevSecrets = {
    encryption_keys: `dev1:${randomBytes(32).toString('base64')}`,
    service_token: `svs_${randomBytes(32).toString('base64url')}`,
    admin_password: `dev-${randomBytes(12).toString('base64url')}`,
  };
  writePrivateJson(file, secrets);
  return secrets;
}

/**
 * The launcher's own lock (`<state>/dev-stack.pid`: its pid and start time): a second `pnpm start` on the same
 * state directory while one runs is refused, rather than stopping the running stack's services as leftovers.
 * A file whose process is gone (or whose pid now belongs to another process) is taken over. Returns the release.
 */
export async function acquireStackLock(stateDir: string): Promise<() => void> {
  const file = path.join(stateDir, 'dev-stack.pid');
  const held = readJson<{ pid?: unknown; started?: unknown }>(file);
  if (
    held &&
    typeof held.pid === 'number' &&
    held.pid !== process.pid &&
    typeof held.started === 'string' &&
    (await processStartTime(held.pid)) === held.started
  ) {
    throw new PreflightError(
      `A development stack already runs from ${stateDir} (pid ${held.pid}); stop it first (Ctrl-C in its terminal, or kill ${held.pid}), or set SVC_DEV_STATE_DIR for another one.`,
    );
  }
  writePrivateJson(file, { pid: process.pid, started: await processStartTime(process.pid) });
  return () => rmSync(file, { force: true });
}
