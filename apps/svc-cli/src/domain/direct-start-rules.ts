import path from 'node:path';
import { CliError, usageError } from './cli-error';

/**
 * The spec's "Direct start rules" as pure checks. Each violation is a {@link CliError} with a stable code and
 * the fix in one line; `svc start` runs every check before it writes anything at the hub.
 */

/** Agent names as the hub accepts them (lower case, digits and `-`, at most 63 characters). */
export const AGENT_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;
const CAPABILITY = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$/;
const PROJECT_CODE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const MODEL = /^[a-z0-9][a-z0-9_-]*\/\S+$/;

export function checkAgentName(name: string): string {
  if (!AGENT_NAME.test(name)) {
    throw usageError(
      'agent_name_invalid',
      `"${name}" is not a valid agent name`,
      'use 1-63 lower-case letters, digits and "-", starting with a letter or digit',
    );
  }
  return name;
}

/** `--capabilities a,b`: trimmed, without empties and duplicates, each in the hub's capability form. */
export function parseCapabilities(value: string | undefined): string[] {
  if (value === undefined) return [];
  const list = [
    ...new Set(
      value
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ];
  const bad = list.find((c) => !CAPABILITY.test(c));
  if (bad !== undefined) {
    throw usageError(
      'capability_invalid',
      `"${bad}" is not a valid capability`,
      'use letters, digits and . _ : / - (at most 64 characters), separated by commas',
    );
  }
  return list.sort();
}

export function checkModel(model: string | undefined): void {
  if (model !== undefined && !MODEL.test(model)) {
    throw usageError(
      'model_invalid',
      `"${model}" is not a provider/model identifier`,
      'pass the exact catalog identifier, e.g. --model local/echo (no aliases)',
    );
  }
}

export function checkProjectCode(code: string | undefined): void {
  if (code !== undefined && !PROJECT_CODE.test(code)) {
    throw usageError('project_code_invalid', `"${code}" is not a project code`, 'pass the project code');
  }
}

/** Rule 2: `SVC_RUNTIME_INSTANCE_ID` is this host's inventory id (`rti_…`), never the bundle id (`wrt_…`). */
export function checkRuntimeInstanceId(envValue: string | undefined, pulledHostId: string): string {
  const fix = `export SVC_RUNTIME_INSTANCE_ID=${pulledHostId} (the host's rti_ id from the Networks view; do not source runtime.env for it)`;
  if (!envValue) {
    throw new CliError({
      code: 'runtime_instance_id_missing',
      message: 'SVC_RUNTIME_INSTANCE_ID is not set (direct start rule 2)',
      fix,
    });
  }
  if (envValue.startsWith('wrt_')) {
    throw new CliError({
      code: 'runtime_bundle_id_not_allowed',
      message: `SVC_RUNTIME_INSTANCE_ID is the runtime bundle id ${envValue}, not the host inventory id (direct start rule 2)`,
      fix,
    });
  }
  if (!/^rti_[A-Za-z0-9_-]+$/.test(envValue)) {
    throw new CliError({
      code: 'runtime_instance_id_invalid',
      message: `SVC_RUNTIME_INSTANCE_ID "${envValue}" is not an inventory id (rti_…) (direct start rule 2)`,
      fix,
    });
  }
  if (envValue !== pulledHostId) {
    throw new CliError({
      code: 'runtime_instance_id_mismatch',
      message: `SVC_RUNTIME_INSTANCE_ID ${envValue} is not this host: the pulled runtime config is for ${pulledHostId} (direct start rule 2)`,
      fix: `${fix}, or pull the config of ${envValue} with svc config pull-runtime`,
    });
  }
  return envValue;
}

/**
 * Rule 3: when the host's `workdir_root` (Networks) differs from the workspace default `agent_workdir_root`,
 * `SVC_AGENT_WORKDIR_ROOT` must be set to the host's value; when it is set at all, it must equal it.
 * Returns the workdir root to use (the host's).
 */
export function checkWorkdirRoot(
  envValue: string | undefined,
  hostWorkdirRoot: string,
  workspaceDefault: string | undefined,
): string {
  const fix = `export SVC_AGENT_WORKDIR_ROOT=${hostWorkdirRoot} (the host's workdir_root in the Networks view)`;
  if (envValue === undefined || envValue === '') {
    if (workspaceDefault !== undefined && normalizeDir(workspaceDefault) !== normalizeDir(hostWorkdirRoot)) {
      throw new CliError({
        code: 'agent_workdir_root_missing',
        message: `SVC_AGENT_WORKDIR_ROOT is not set and the workspace default ${workspaceDefault} differs from this host's workdir_root ${hostWorkdirRoot} (direct start rule 3)`,
        fix,
      });
    }
    return hostWorkdirRoot;
  }
  if (normalizeDir(envValue) !== normalizeDir(hostWorkdirRoot)) {
    throw new CliError({
      code: 'agent_workdir_root_mismatch',
      message: `SVC_AGENT_WORKDIR_ROOT ${envValue} is not this host's workdir_root ${hostWorkdirRoot} (direct start rule 3)`,
      fix,
    });
  }
  return hostWorkdirRoot;
}

/** Rule 4: `--serve-public-base-url` is exactly the host's `console_public_base_url`. */
export function checkServePublicBaseUrl(
  flag: string | undefined,
  hostConsoleBaseUrl: string,
  pulledPublicBaseUrl: string,
): void {
  if (flag === undefined) return;
  const given = normalizeUrl(flag);
  if (given !== normalizeUrl(hostConsoleBaseUrl) || given !== normalizeUrl(pulledPublicBaseUrl)) {
    throw new CliError({
      code: 'serve_public_base_url_mismatch',
      message: `--serve-public-base-url ${flag} is not this server's console_public_base_url ${hostConsoleBaseUrl} (direct start rule 4)`,
      fix: `pass --serve-public-base-url ${hostConsoleBaseUrl} (consoleRouter.publicBaseUrl) or leave it out; never construct a hostname by hand`,
    });
  }
}

/** The flags of `svc start` the local checks read. */
export interface StartCommandLine {
  name: string;
  capabilities?: string | undefined;
  model?: string | undefined;
  project?: string | undefined;
  teamId?: string | undefined;
  workdir?: string | undefined;
  worker: boolean;
  serve: boolean;
  servePort?: number | undefined;
  serverLocalProviderAuth: boolean;
}

/**
 * The checks of the command line alone (nothing read or written): name, capabilities, model and project forms,
 * `--project` with `--workdir`, and server-local provider auth only when the host allows it and names its file.
 * `--serve-port` implies `--serve`.
 */
export function checkStartCommandLine(
  flags: StartCommandLine,
  host: { serverLocalAllowed: boolean; serverLocalSource: string | undefined },
): { name: string; capabilities: string[]; serving: boolean } {
  const name = checkAgentName(flags.name);
  const capabilities = parseCapabilities(flags.capabilities);
  checkModel(flags.model);
  checkProjectCode(flags.project);
  if (flags.project !== undefined && flags.workdir !== undefined) {
    checkPlacement({
      ...flags,
      project: flags.project,
      workdir: flags.workdir,
      teamId: flags.teamId,
      isNew: false,
      workdirRoot: '/',
    });
  }
  if (flags.serverLocalProviderAuth && !host.serverLocalAllowed) {
    throw new CliError({
      code: 'server_local_provider_auth_not_allowed',
      message: 'server-local provider auth is for development and break-glass only and is not allowed here',
      fix: 'set SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH=1 on this host if you really mean it, or leave the flag out',
    });
  }
  if (flags.serverLocalProviderAuth && !host.serverLocalSource) {
    throw usageError(
      'server_local_provider_auth_source_missing',
      '--server-local-provider-auth needs the provider auth file of this host',
      'set SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE=<path of the provider auth file>',
    );
  }
  if (flags.servePort !== undefined && (flags.servePort < 1024 || flags.servePort > 65535)) {
    throw usageError(
      'serve_port_invalid',
      `--serve-port ${flags.servePort} is outside 1024-65535`,
      'pass a port from 1024 to 65535, or leave it out to have one allocated',
    );
  }
  return { name, capabilities, serving: flags.serve || flags.servePort !== undefined };
}

export interface PlacementInput {
  project: string | undefined;
  workdir: string | undefined;
  teamId: string | undefined;
  worker: boolean;
  /** The agent is not registered at the hub yet. */
  isNew: boolean;
  workdirRoot: string;
}

/** Rule 5: `--project` or `--workdir`, never both; a new agent needs one; a new worker needs project and team. */
export function checkPlacement(input: PlacementInput): void {
  if (input.project !== undefined && input.workdir !== undefined) {
    throw usageError(
      'project_and_workdir_exclusive',
      '--project and --workdir cannot be used together (direct start rule 5)',
      'pass either --project <code> or --workdir <dir>',
    );
  }
  if (input.workdir !== undefined) {
    if (!path.isAbsolute(input.workdir)) {
      throw usageError(
        'workdir_not_absolute',
        `--workdir ${input.workdir} is not an absolute path`,
        `pass an absolute path under ${input.workdirRoot}`,
      );
    }
    if (!isInside(input.workdir, input.workdirRoot)) {
      throw new CliError({
        code: 'workdir_outside_root',
        message: `--workdir ${input.workdir} is outside this host's workdir_root ${input.workdirRoot} (direct start rule 5)`,
        fix: `pass a --workdir under ${input.workdirRoot}`,
      });
    }
  }
  if (!input.isNew) return;
  if (input.worker && (input.project === undefined || input.teamId === undefined)) {
    throw usageError(
      'worker_requires_project_and_team',
      'a new worker needs --project and --team-id (direct start rule 5)',
      'pass --project <code> --team-id <team-id> with --worker',
    );
  }
  if (input.project === undefined && input.workdir === undefined) {
    throw usageError(
      'project_or_workdir_required',
      'a new agent needs --project or --workdir (direct start rule 5)',
      `pass --project <code>, or --workdir <dir under ${input.workdirRoot}>`,
    );
  }
}

/** An existing agent keeps the workdir it was registered with; a different `--workdir` is refused. */
export function checkRegisteredWorkdir(
  name: string,
  flag: string | undefined,
  registered: string | null | undefined,
): void {
  if (flag === undefined || !registered || path.resolve(flag) === path.resolve(registered)) return;
  throw new CliError({
    code: 'agent_workdir_registered',
    message: `agent "${name}" is registered with workdir ${registered}, not ${flag}`,
    fix: `leave out --workdir (the agent starts in ${registered}), or register a new agent under another --name`,
  });
}

export interface HostReadiness {
  spawn_ready: boolean;
  reasons: string[];
}

/** Rule 6: the host shows spawn ready at the hub (fresh heartbeat and a ready relay). */
export function checkSpawnReady(hostId: string, readiness: HostReadiness): void {
  if (readiness.spawn_ready) return;
  throw new CliError({
    code: 'runtime_host_not_ready',
    message: `runtime host ${hostId} is not spawn ready: ${readiness.reasons.join('; ') || 'no fresh heartbeat or relay not ready'} (direct start rule 6)`,
    fix: 'run `svc runtime up` on this host and wait for its heartbeat (svc config doctor shows it)',
    details: { reasons: readiness.reasons },
  });
}

export function runtimeNotRunning(detail: string): CliError {
  return new CliError({
    code: 'runtime_not_running',
    message: `the local runtime is not running: ${detail} (direct start rule 6)`,
    fix: 'run `svc runtime up` on this host (in the foreground or under its service manager)',
  });
}

/** Whether `child` is strictly inside `root` (after resolving `.` and `..`), as the hub requires. */
export function isInside(child: string, root: string): boolean {
  const relative = path.relative(path.resolve(root), path.resolve(child));
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}

function normalizeDir(dir: string): string {
  return path.resolve(dir);
}

function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** Exit code a runtime uses when its remembered provider/model left the catalog (`ProviderModelNotFoundError`). */
export const PROVIDER_MODEL_NOT_FOUND_EXIT = 78;

/** Starting an agent that runs: refused, with `svc stop` as the fix. */
export function agentAlreadyRunning(name: string, where: string): CliError {
  return new CliError({
    code: 'agent_already_running',
    message: `agent "${name}" is already running (${where})`,
    fix: `svc stop ${name}, then start it again`,
  });
}
