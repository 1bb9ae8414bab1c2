import { spawn } from 'node:child_process';
import { closeSync, openSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { ProfileStore } from '../../data/profile-store';
import { probe } from '../../data/local-service-probe';
import { readLivePid } from '../../data/runtime-files';
import { ensureOwnerOnlyDir, SECRET_FILE_MODE, writeSecretFile } from '../../data/secret-files';
import { serviceEntryPoints } from '../../data/service-entry-points';
import { authRequired, CliError } from '../../domain/cli-error';
import { EXIT } from '../../domain/exit-codes';
import type { RelayAddress } from '../../domain/relay-address';
import { relaySpawnEnvironment } from '../../domain/relay-spawn-environment';
import { baseEnvironment, runtimeStateFiles } from '../../domain/runtime-plan';

/** The relay daemon's pid file and log in the profile's state directory. */
export function relayDaemonFiles(stateDir: string) {
  return { pid_file: path.join(stateDir, 'relay.pid'), log_file: path.join(stateDir, 'relay.log') };
}

export interface RelayStartResult {
  mode: 'foreground' | 'daemon';
  pid: number;
  url: string;
  pid_file: string | null;
  log_file: string | null;
  exit_code: number | null;
}

/** The relay's environment: its address, SVC_RELAY_TOKEN (required) and what the profile knows of the hub. */
async function relayEnvironment(store: ProfileStore, address: RelayAddress, env: NodeJS.ProcessEnv) {
  const profile = await store.read();
  const secrets = await store.readRuntimeSecrets();
  const relayToken = env.SVC_RELAY_TOKEN || secrets.SVC_RELAY_TOKEN;
  if (!relayToken) {
    throw authRequired(
      'the relay needs SVC_RELAY_TOKEN (in the environment or the runtime env file)',
      'svc config pull-runtime, or export SVC_RELAY_TOKEN',
    );
  }
  const out: Record<string, string> = {
    ...baseEnvironment(env),
    LOG_LEVEL: env.LOG_LEVEL || 'info',
    RELAY_HOST: address.host,
    RELAY_PORT: String(address.port),
    SVC_RELAY_TOKEN: relayToken,
  };
  const hubUrl = env.SVC_HUB_URL || profile.hub_url;
  const workspace = env.SVC_WORKSPACE || profile.workspace;
  const apiKey = env.SVC_WORKSPACE_API_KEY || secrets.SVC_WORKSPACE_API_KEY;
  if (hubUrl) out.SVC_HUB_URL = hubUrl;
  if (workspace) out.SVC_WORKSPACE = workspace;
  if (apiKey) out.SVC_WORKSPACE_API_KEY = apiKey;
  // What spawns need, as `svc runtime up` gives it (without a host id the relay says why it cannot spawn).
  const runtimeInstanceId = env.SVC_RUNTIME_INSTANCE_ID || profile.runtime?.runtime_instance_id;
  if (runtimeInstanceId) {
    Object.assign(
      out,
      relaySpawnEnvironment({
        runtimeInstanceId,
        relayPublicUrl: profile.runtime?.relay.publicUrl ?? null,
        svcEntry: serviceEntryPoints().svcEntry,
        configDir: store.paths.config_dir,
        profile: store.paths.profile,
        spawnLog: runtimeStateFiles(await store.stateDir()).relay_spawn_log,
        hostEnv: env,
      }),
    );
  }
  return out;
}

/**
 * `svc internal relay start`: runs the relay in the foreground (signals are passed on; returns when it exits)
 * or, with `daemon`, detached with its pid in `<state dir>/relay.pid` and its output in `relay.log` (0600),
 * once it answers `/healthz`.
 */
export async function startRelay(input: {
  store: ProfileStore;
  address: RelayAddress;
  daemon: boolean;
  env: NodeJS.ProcessEnv;
  progress: <R>(label: string, work: () => Promise<R>) => Promise<R>;
}): Promise<RelayStartResult> {
  const env = await relayEnvironment(input.store, input.address, input.env);
  const { relayMain } = serviceEntryPoints();
  if (!input.daemon) {
    const child = spawn(process.execPath, [relayMain], { env, stdio: 'inherit', shell: false });
    // SIGHUP here means the terminal went away: the relay stops (to the relay itself SIGHUP only means
    // "re-read the key file").
    const forward = (signal: NodeJS.Signals) => child.kill(signal === 'SIGHUP' ? 'SIGTERM' : signal);
    const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
    for (const s of signals) process.on(s, forward);
    const code = await new Promise<number>((resolve) =>
      child.once('exit', (c, signal) => resolve(c ?? (signal ? 0 : 1))),
    );
    for (const s of signals) process.off(s, forward);
    if (code !== 0) {
      throw new CliError({
        code: 'relay_exited',
        message: `the relay exited with code ${code}`,
        details: { exit_code: code },
      });
    }
    return {
      mode: 'foreground',
      pid: child.pid ?? 0,
      url: input.address.url,
      pid_file: null,
      log_file: null,
      exit_code: code,
    };
  }
  const stateDir = await input.store.stateDir();
  const files = relayDaemonFiles(stateDir);
  const running = await readLivePid(files.pid_file);
  if (running !== undefined) {
    throw new CliError({
      code: 'relay_already_running',
      message: `a relay daemon of this profile already runs (pid ${running})`,
      fix: 'svc internal relay status',
      details: { pid: running },
    });
  }
  await ensureOwnerOnlyDir(stateDir);
  const fd = openSync(files.log_file, 'a', SECRET_FILE_MODE);
  await fs.chmod(files.log_file, SECRET_FILE_MODE);
  const child = spawn(process.execPath, [relayMain], {
    env,
    stdio: ['ignore', fd, fd],
    detached: true,
    cwd: stateDir,
    shell: false,
  });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined)
    throw new CliError({ code: 'relay_start_failed', message: 'the relay could not be started' });
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? 1;
  });
  child.unref();
  await writeSecretFile(files.pid_file, `${pid}\n`);
  await input.progress(`Starting the relay on ${input.address.url}`, async () => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited !== null) {
        await fs.rm(files.pid_file, { force: true });
        throw new CliError({
          code: 'relay_exited',
          message: `the relay exited with code ${exited} while starting; see ${files.log_file}`,
          details: { log_file: files.log_file },
        });
      }
      if ((await probe(`${input.address.url}/healthz`, 1_000)).ok) return;
      if (Date.now() > deadline) {
        throw new CliError({
          code: 'relay_start_timeout',
          message: `the relay (pid ${pid}) did not answer ${input.address.url}/healthz within 30 s; see ${files.log_file}`,
          exit: EXIT.timeout,
        });
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  });
  return {
    mode: 'daemon',
    pid,
    url: input.address.url,
    pid_file: files.pid_file,
    log_file: files.log_file,
    exit_code: null,
  };
}
