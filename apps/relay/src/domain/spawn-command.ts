import type { RelayApi } from '@svc/contracts';
import { NEVER_TO_CHILD } from '../env';

export type SpawnRequest = RelayApi.components['schemas']['SpawnRequest'];
export type SpawnStarted = RelayApi.components['schemas']['SpawnStarted'];
export type SpawnProblemBody = RelayApi.components['schemas']['SpawnProblem'];

/** A spawn request with its defaults applied: the form its identity (the idempotency check) is taken of. */
export function normalizeSpawnRequest(body: SpawnRequest): SpawnRequest {
  const agent = body.agent;
  return {
    spawn_id: body.spawn_id,
    command_key: body.command_key ?? 'default',
    agent: {
      ...agent,
      ...(agent.capabilities ? { capabilities: [...new Set(agent.capabilities)].sort() } : {}),
      serve: agent.serve ?? agent.serve_port !== undefined,
      worker: agent.worker ?? false,
    },
  };
}

/** Where and as whom the relay runs `svc start`. */
export interface SvcInvocation {
  nodePath: string;
  svcEntry: string;
  configDir: string | undefined;
  profile: string | undefined;
}

function globalFlags(svc: SvcInvocation): string[] {
  return [
    ...(svc.configDir ? ['--config-dir', svc.configDir] : []),
    ...(svc.profile ? ['--profile', svc.profile] : []),
  ];
}

/**
 * The argv of the local `svc start` for a spawn: built here from the structured body, never from a string the
 * caller sent. The agent program is the allow-listed command of `command_key` (`null`: svc's own agent).
 */
export function spawnArgv(svc: SvcInvocation, request: SpawnRequest, command: string | null): string[] {
  const a = request.agent;
  return [
    svc.nodePath,
    svc.svcEntry,
    'start',
    '--name',
    a.name,
    ...(a.model !== undefined ? ['--model', a.model] : []),
    ...(a.capabilities && a.capabilities.length > 0 ? ['--capabilities', a.capabilities.join(',')] : []),
    ...(a.project !== undefined ? ['--project', a.project] : []),
    ...(a.workdir !== undefined ? ['--workdir', a.workdir] : []),
    ...(a.team_id !== undefined ? ['--team-id', a.team_id] : []),
    ...(a.serve ? ['--serve'] : []),
    ...(a.serve_port !== undefined ? ['--serve-port', String(a.serve_port)] : []),
    ...(a.worker ? ['--worker'] : []),
    ...(command !== null ? ['--command', command] : []),
    '--spawn-id',
    request.spawn_id,
    '--json',
    ...globalFlags(svc),
  ];
}

/** The argv of the local `svc stop` that undoes a spawn whose `svc start` had to be killed. */
export function stopArgv(svc: SvcInvocation, name: string): string[] {
  return [svc.nodePath, svc.svcEntry, 'stop', name, '--json', ...globalFlags(svc)];
}

/** The variables every spawned `svc start` gets from the relay's own environment, when set. */
const CHILD_ENV_BASE = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'TZ',
  'TMPDIR',
  'XDG_CONFIG_HOME',
  'SVC_CONFIG_DIR',
  'SVC_RUNTIME_INSTANCE_ID',
  'SVC_AGENT_WORKDIR_ROOT',
  'SVC_WORKFLOW_URL',
];

/**
 * The environment of a spawned process: an allow-list of the relay's own variables (the base list plus the
 * host's `SVC_RELAY_CHILD_ENV`), so the relay token, the workspace API key and unrelated secrets stay behind.
 */
export function childEnvironment(source: NodeJS.ProcessEnv, keep: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...CHILD_ENV_BASE, ...keep]) {
    const value = source[name];
    if (value !== undefined && !NEVER_TO_CHILD.has(name)) out[name] = value;
  }
  if (!out.PATH) out.PATH = '/usr/local/bin:/usr/bin:/bin';
  return out;
}

/** Codes of `svc start` that mean the host cannot take spawns now (direct start rule 6). */
const NOT_SPAWN_READY = new Set(['runtime_host_not_ready', 'runtime_not_running', 'runtime_config_missing']);

/** A final answer of the relay for a spawn: the same for every repeat of its spawn id. */
export type SpawnOutcome =
  | { ok: true; status: 200; body: SpawnStarted }
  | {
      ok: false;
      status: number;
      problem: {
        code: string;
        detail: string;
        rule: number | null;
        cli_code: string | null;
        exit_code: number | null;
      };
    };

interface CliEnvelope {
  ok: boolean;
  result?: {
    agent_id?: string;
    name?: string;
    pid?: number | null;
    serve_port?: number | null;
    runtime_instance_id?: string;
    console_url?: string | null;
  };
  error?: { code?: string; message?: string; exit_code?: number };
}

/** The last line of stdout that parses as svc's JSON envelope. */
function envelopeOf(stdout: string): CliEnvelope | undefined {
  const text = stdout.trim();
  try {
    return JSON.parse(text) as CliEnvelope;
  } catch {
    // fall through: a multi-line output; take the last JSON object
  }
  const start = text.lastIndexOf('\n{');
  if (start < 0) return undefined;
  try {
    return JSON.parse(text.slice(start + 1)) as CliEnvelope;
  } catch {
    return undefined;
  }
}

/** Maps how `svc start` ended (its exit code and JSON envelope) to the relay's answer. */
export function outcomeOfStart(input: {
  spawnId: string;
  exitCode: number | null;
  stdout: string;
  now: Date;
}): SpawnOutcome {
  const envelope = envelopeOf(input.stdout);
  const result = envelope?.result;
  if (input.exitCode === 0 && envelope?.ok && result?.agent_id && result.runtime_instance_id) {
    return {
      ok: true,
      status: 200,
      body: {
        spawn_id: input.spawnId,
        state: 'started',
        agent_id: result.agent_id,
        name: result.name ?? '',
        pid: result.pid ?? null,
        serve_port: result.serve_port ?? null,
        runtime_instance_id: result.runtime_instance_id,
        console_url: result.console_url ?? null,
        started_at: input.now.toISOString(),
      },
    };
  }
  const cliCode = envelope?.error?.code ?? null;
  const message = envelope?.error?.message ?? 'svc start ended without a result';
  const ruleMatch = /direct start rule (\d+)/.exec(message);
  const rule = ruleMatch ? Number(ruleMatch[1]) : null;
  const problem = { detail: `svc start: ${message}`, rule, cli_code: cliCode, exit_code: input.exitCode };
  if (cliCode === 'agent_already_running') {
    return { ok: false, status: 409, problem: { code: 'agent_already_running', ...problem } };
  }
  if (cliCode !== null && (NOT_SPAWN_READY.has(cliCode) || rule === 6)) {
    return { ok: false, status: 503, problem: { code: 'host_not_spawn_ready', ...problem } };
  }
  // Usage (2) and refused rules: the request cannot start as asked.
  if (rule !== null || input.exitCode === 2) {
    return { ok: false, status: 422, problem: { code: 'start_rule_violated', ...problem } };
  }
  return { ok: false, status: 502, problem: { code: 'spawn_failed', ...problem } };
}
