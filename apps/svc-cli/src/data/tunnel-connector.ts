import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { CLOUDFLARED_INSTALL_HINT, connectorArgv, connectorReady } from '../domain/tunnel-connector';
import { redactText } from '../domain/redact';
import { ManagedProcess } from './managed-process';
import { probe } from './local-service-probe';
import { allocateServePort } from './serve-port';
import { writeSecretFile } from './secret-files';

/** The running connector as `svc runtime up` sees it. */
export interface TunnelConnectorHandle {
  /** Whether the connector holds edge connections now (its `/ready`); false while it is not running. */
  ready(): Promise<boolean>;
  stop(graceMs: number): Promise<void>;
}

/** `SVC_CLOUDFLARED_BIN` when set, else the first executable `cloudflared` on PATH; null when there is none. */
export async function resolveCloudflared(env: NodeJS.ProcessEnv): Promise<string | null> {
  const executable = async (file: string) => {
    try {
      await fs.access(file, constants.X_OK);
      return (await fs.stat(file)).isFile();
    } catch {
      return false;
    }
  };
  const explicit = env.SVC_CLOUDFLARED_BIN?.trim();
  if (explicit) return (await executable(explicit)) ? explicit : null;
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'cloudflared');
    if (await executable(candidate)) return candidate;
  }
  return null;
}

/** Where the connector's token and log live in the runtime's state directory. */
export function tunnelConnectorFiles(stateDir: string) {
  const dir = path.join(stateDir, 'tunnel');
  return {
    dir,
    token_file: path.join(dir, 'connector.token'),
    log_file: path.join(stateDir, 'cloudflared.log'),
  };
}

const NOT_RUNNING: TunnelConnectorHandle = { ready: async () => false, stop: async () => undefined };

/**
 * Starts the tunnel connector when the host's runtime environment has an active Cloudflare tunnel: asks the hub
 * for the connector token (runtime key), writes it to a 0600 file in a 0700 directory, and runs
 * `cloudflared tunnel run --token-file` as a supervised child (restarted with back-off whenever it exits). Null
 * when the host needs no connector. When `cloudflared` is missing or the hub cannot say, the runtime goes on
 * without it and its heartbeats report the connector not ready.
 */
export async function startTunnelConnector(input: {
  hub: HubClient;
  hostId: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  baseEnv: Record<string, string>;
  log: (line: string) => void;
}): Promise<TunnelConnectorHandle | null> {
  let settings;
  try {
    settings = unwrap(
      await input.hub.GET('/api/v1/runtime-hosts/{hostId}/tunnel-connector', {
        params: { path: { hostId: input.hostId } },
        signal: AbortSignal.timeout(10_000),
      }),
    );
  } catch (error) {
    input.log(
      `tunnel connector: the hub did not say whether one is needed (${redactText((error as Error).message)})`,
    );
    return NOT_RUNNING;
  }
  const connector = settings.connector;
  if (!connector) return null;
  const binary = await resolveCloudflared(input.env);
  if (!binary) {
    input.log(`tunnel connector: cloudflared is not installed; ${CLOUDFLARED_INSTALL_HINT}`);
    return NOT_RUNNING;
  }
  const files = tunnelConnectorFiles(input.stateDir);
  await writeSecretFile(files.token_file, connector.token);
  const metricsPort = await allocateServePort(new Set());
  const process = new ManagedProcess({
    name: 'cloudflared',
    argv: connectorArgv(binary, metricsPort, files.token_file),
    cwd: input.stateDir,
    env: input.baseEnv,
    logFile: files.log_file,
    restart: 'always',
    canGiveUp: false,
    log: input.log,
  });
  await process.start();
  input.log(
    `tunnel connector: cloudflared pid ${process.pid} for tunnel ${connector.tunnel_id} of environment ${settings.runtime_environment}`,
  );
  return {
    async ready() {
      if (!process.running()) return false;
      const answer = await probe(`http://127.0.0.1:${metricsPort}/ready`);
      return connectorReady(answer.status, answer.body);
    },
    async stop(graceMs) {
      await process.stop(graceMs);
      await fs.rm(files.token_file, { force: true });
    },
  };
}
