import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import { CLOUDFLARED_INSTALL_HINT, connectorArgv, connectorReady } from '../domain/tunnel-connector';
import { redactText } from '../domain/redact';
import { ManagedProcess } from './managed-process';
import { probe } from './local-service-probe';
import type { ChildRegistry } from '@svc/service-kit/child-registry';
import type { HeartbeatTunnel } from './runtime-heartbeat';
import { allocateServePort } from './serve-port';
import { writeSecretFile } from './secret-files';

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

export interface TunnelConnectorInput {
  hub: HubClient;
  hostId: string;
  stateDir: string;
  env: NodeJS.ProcessEnv;
  baseEnv: Record<string, string>;
  log: (line: string) => void;
  /** How long the connector gets to exit after SIGTERM (when it is no longer needed, or the runtime stops). */
  stopGraceMs: number;
  /** Where the connector's process is recorded (see `ChildRegistry`). */
  registry?: ChildRegistry;
}

/**
 * The host's tunnel connector under `svc runtime up`. `check()` asks the hub (runtime key) whether the host's
 * runtime environment has an active Cloudflare tunnel; when it has, the connector token is written to a 0600 file
 * in a 0700 directory and `cloudflared tunnel run --token-file` runs as a supervised child (restarted with
 * back-off whenever it exits). Until a connector runs, every heartbeat checks again (a read without a token is
 * cheap and not audited), so a tunnel provisioned while the runtime is up gets its connector within a beat. A
 * missing `cloudflared` or a hub that cannot say does not stop the runtime: it says so once and the heartbeats
 * report the connector not ready.
 */
export class TunnelConnector {
  private process: ManagedProcess | null = null;
  private metricsPort = 0;
  private needed = false;
  private stopped = false;
  private lastProblem: string | null = null;
  private settings: HubApi.components['schemas']['TunnelConnectorSettings'] | null = null;

  constructor(private readonly input: TunnelConnectorInput) {}

  /** Whether heartbeats carry the connector's readiness: one runs, or the host's tunnel needs one. */
  get reported(): boolean {
    return this.process !== null || this.needed;
  }

  private problem(line: string): void {
    if (line !== this.lastProblem) this.input.log(`tunnel connector: ${line}`);
    this.lastProblem = line;
  }

  /** Starts the connector when the host needs one and none runs; never throws (the heartbeat calls it). */
  async check(): Promise<void> {
    if (this.process || this.stopped) return;
    try {
      await this.startWhenNeeded();
    } catch (error) {
      this.process = null;
      this.problem(`cloudflared could not be started (${redactText((error as Error).message)})`);
    }
  }

  private async startWhenNeeded(): Promise<void> {
    // Once the hub has said a connector is needed, its answer is kept: checks until the start succeeds (e.g.
    // cloudflared being installed) do not read the token again, so its reads stay few in the hub's audit.
    let settings = this.settings;
    if (!settings) {
      try {
        settings = unwrap(
          await this.input.hub.GET('/api/v1/runtime-hosts/{hostId}/tunnel-connector', {
            params: { path: { hostId: this.input.hostId } },
            signal: AbortSignal.timeout(10_000),
          }),
        );
      } catch (error) {
        this.problem(`the hub did not say whether one is needed (${redactText((error as Error).message)})`);
        return;
      }
    }
    const connector = settings.connector;
    this.needed = connector !== null;
    if (!connector) return;
    this.settings = settings;
    const binary = await resolveCloudflared(this.input.env);
    if (!binary) {
      this.problem(`cloudflared is not installed; ${CLOUDFLARED_INSTALL_HINT}`);
      return;
    }
    if (this.stopped) return;
    const files = tunnelConnectorFiles(this.input.stateDir);
    await writeSecretFile(files.token_file, connector.token);
    this.metricsPort = await allocateServePort(new Set());
    if (this.stopped) {
      await fs.rm(files.token_file, { force: true });
      return;
    }
    const process = new ManagedProcess({
      name: 'cloudflared',
      argv: connectorArgv(binary, this.metricsPort, files.token_file),
      cwd: this.input.stateDir,
      env: this.input.baseEnv,
      logFile: files.log_file,
      restart: 'always',
      canGiveUp: false,
      log: this.input.log,
      registry: this.input.registry,
    });
    // Set before the start, so a stop() meanwhile stops this start too.
    this.process = process;
    await process.start();
    this.lastProblem = null;
    this.input.log(
      `tunnel connector: cloudflared pid ${process.pid} for tunnel ${connector.tunnel_id} of environment ${settings.runtime_environment}`,
    );
  }

  /** Whether the connector holds edge connections now (its `/ready`); false while it is not running. */
  async ready(): Promise<boolean> {
    if (!this.process?.running()) return false;
    const answer = await probe(`http://127.0.0.1:${this.metricsPort}/ready`);
    return connectorReady(answer.status, answer.body);
  }

  /**
   * Follows the tunnel a heartbeat's answer names (undefined: a hub that does not say). A connector that runs for
   * a tunnel that is gone — the host left its environment, the tunnel was deleted or is being deleted, or another
   * tunnel replaced it — stops and its token file is removed; the next `check()` asks the hub again, so a
   * replacing tunnel gets its own connector. While a tunnel is being provisioned again, or failed, the
   * connector keeps running: the tunnel it serves may still be there.
   */
  async follow(tunnel: HeartbeatTunnel | undefined): Promise<void> {
    const running = this.settings?.connector;
    if (tunnel === undefined || !running || !this.process || this.stopped) return;
    const gone =
      tunnel === null ||
      tunnel.provider !== 'cloudflare' ||
      tunnel.state === 'none' ||
      tunnel.state === 'deleting' ||
      (typeof tunnel.tunnel_id === 'string' && tunnel.tunnel_id !== running.tunnel_id);
    if (!gone) return;
    const process = this.process;
    this.process = null;
    this.settings = null;
    this.needed = false;
    await this.retire(process);
    const why =
      tunnel === null
        ? 'the host is in no runtime environment now'
        : `tunnel ${running.tunnel_id} is ${tunnel.state === 'deleting' || tunnel.state === 'none' ? 'deleted' : 'replaced'}`;
    this.input.log(`tunnel connector: cloudflared stopped (${why})`);
  }

  /** The runtime stops: so does the connector, for good. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.retire(this.process);
  }

  /** Stops a connector's process (SIGTERM, SIGKILL after the grace) and removes its token file. */
  private async retire(process: ManagedProcess | null): Promise<void> {
    await process?.stop(this.input.stopGraceMs);
    await fs.rm(tunnelConnectorFiles(this.input.stateDir).token_file, { force: true });
  }
}
