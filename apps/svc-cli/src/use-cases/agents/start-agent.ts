import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ApiError, unwrap } from '@svc/contracts';
import { agentLogFile, agentRuntimeHome, clearAgentState, readAgentState } from '../../data/agent-state';
import { writeAgentState } from '../../data/agent-state';
import type { AgentLocalState } from '../../data/agent-state';
import { findAgentByName, findNetworkHost, listHostAgents } from '../../data/host-agents';
import type { HubAgent } from '../../data/host-agents';
import { connectLocalRuntime, getSupervisedAgent, stopSupervisedAgent } from '../../data/local-runtime';
import type { SupervisedAgent } from '../../data/local-runtime';
import { materializeProviderAuth } from '../../data/provider-auth-materializer';
import type { MaterializedProviderAuth } from '../../data/provider-auth-materializer';
import { defaultAgentArgv } from '../../data/reference-agent-command';
import { chooseServePort } from '../../data/serve-port';
import { ensureOwnerOnlyDir } from '../../data/secret-files';
import { CliError, usageError } from '../../domain/cli-error';
import {
  checkPlacement,
  checkRegisteredWorkdir,
  checkRuntimeInstanceId,
  checkStartCommandLine,
  agentAlreadyRunning,
  PROVIDER_MODEL_NOT_FOUND_EXIT,
  checkServePublicBaseUrl,
  checkSpawnReady,
  checkWorkdirRoot,
  runtimeNotRunning,
} from '../../domain/direct-start-rules';
import { countsOnNetworks, RUNNING_STATUSES } from '../../domain/agent-status';
import { splitCommand } from '../../domain/split-command';
import { agentHostSettings, type AgentHostEnv } from '../../domain/agent-host-settings';
import { requirePulledRuntime } from './host-context';
import type { HostContext } from './host-context';
import { verifyStartedAgent } from './verify-started-agent';
import type { StartVerification } from './verify-started-agent';

export interface StartAgentFlags {
  name: string;
  command?: string | undefined;
  model?: string | undefined;
  capabilities?: string | undefined;
  project?: string | undefined;
  teamId?: string | undefined;
  serve: boolean;
  servePort?: number | undefined;
  servePublicBaseUrl?: string | undefined;
  worker: boolean;
  workdir?: string | undefined;
  serverLocalProviderAuth: boolean;
  spawnId?: string | undefined; // set by the relay for a hub spawn; a direct start has none
}

/** The variables of the host environment `svc start` reads (passed in, so the rules stay testable). */
export interface StartAgentEnv extends AgentHostEnv {
  SVC_RUNTIME_INSTANCE_ID?: string | undefined;
  SVC_AGENT_WORKDIR_ROOT?: string | undefined;
  SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH?: string | undefined;
  SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE?: string | undefined;
}

export interface StartAgentInput extends HostContext {
  flags: StartAgentFlags;
  env: StartAgentEnv;
  /** Runs a wait behind the command's spinner. */
  progress: <R>(label: string, work: () => Promise<R>) => Promise<R>;
  /** How long rule 7 may take (default 30 s). */
  verifyTimeoutMs?: number;
}

export interface StartAgentResult {
  agent_id: string;
  name: string;
  registered: boolean;
  /** The previous process exited with ProviderModelNotFoundError; its runtime home was cleared first. */
  recovered_from_provider_model_not_found: boolean;
  runtime_instance_id: string;
  status: string;
  model: string | null;
  serve_port: number | null;
  console_url: string | null;
  workdir: string;
  pid: number | null;
  log_file: string;
  argv: string[];
  authorization_source: string;
  runtime_credential_expires_at: string;
  server_local_provider_auth: Pick<
    MaterializedProviderAuth,
    'canonical_file' | 'agent_auth_path' | 'identity'
  > | null;
  verification: StartVerification;
}

const ACTIVE_SUPERVISOR_STATES = new Set(['starting', 'running', 'backoff', 'stopping']);

/**
 * A direct CLI start on this runtime host (spec: Direct start rules 1–8). Every rule is checked before the
 * first hub write; then the agent is found by name or registered, started at the hub with launch path
 * `direct` (the one runtime credential issuance), its local state written (0600), and its process handed to
 * the local runtime's supervisor with argv split without a shell. Rule 7 is verified before returning. The
 * CLI never calls the relay (rule 8); run by the relay (`--spawn-id`) it records a relay launch. An agent whose
 * previous process exited with 78 (`ProviderModelNotFoundError`) is recovered: only its runtime home is cleared.
 */
export async function startAgent(input: StartAgentInput): Promise<StartAgentResult> {
  const { flags, env, hub, workspace, stateDir } = input;

  // Local checks of the command line: nothing is read or written yet.
  const { name, capabilities, serving } = checkStartCommandLine(flags, {
    serverLocalAllowed: env.SVC_ALLOW_SERVER_LOCAL_PROVIDER_AUTH === '1',
    serverLocalSource: env.SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE,
  });
  const argv = flags.command !== undefined ? splitCommand(flags.command) : defaultAgentArgv();
  if (!argv) {
    throw usageError(
      'default_command_unavailable',
      'the reference agent is not installed next to svc, so there is no default agent command',
      'pass --command "<program and arguments>"',
    );
  }

  // Rule 2: the host inventory id.
  const runtime = requirePulledRuntime(input.profile);
  const hostId = checkRuntimeInstanceId(env.SVC_RUNTIME_INSTANCE_ID, runtime.runtime_instance_id);

  // Rule 6 (local half): the runtime of this profile runs and is this host's.
  const local = await connectLocalRuntime(stateDir);
  if (!local.running) throw runtimeNotRunning(local.detail);
  if (local.status.runtime_instance_id !== hostId || local.status.workspace !== workspace) {
    throw runtimeNotRunning(
      `the runtime on ${local.socket} runs ${local.status.workspace}/${local.status.runtime_instance_id}, not ${workspace}/${hostId}`,
    );
  }

  const host = await findNetworkHost(hub, workspace, hostId);
  if (!host) {
    throw new CliError({
      code: 'runtime_host_unknown',
      message: `runtime host ${hostId} is not in the Networks view of workspace ${workspace}`,
      fix: 'check SVC_RUNTIME_INSTANCE_ID against the Networks view, then svc config pull-runtime',
    });
  }
  // Rules 3 and 4.
  const workdirRoot = checkWorkdirRoot(
    env.SVC_AGENT_WORKDIR_ROOT,
    host.workdir_root,
    runtime.agent_workdir_root,
  );
  checkServePublicBaseUrl(
    flags.servePublicBaseUrl,
    host.console_public_base_url,
    runtime.consoleRouter.publicBaseUrl,
  );

  const existing = await findAgentByName(hub, workspace, name);
  if (existing && existing.runtime_instance_id !== hostId) {
    throw new CliError({
      code: 'agent_on_another_host',
      message: `agent "${name}" is registered on runtime host ${existing.runtime_instance_id ?? '(none)'}, not on ${hostId}`,
      fix: 'start it on its own host, or choose another --name',
    });
  }
  if (existing?.status === 'evicted') {
    throw new CliError({
      code: 'agent_evicted',
      message: `agent "${name}" was evicted; an evicted agent never starts again`,
      fix: 'choose another --name',
    });
  }
  // Rule 5.
  checkPlacement({
    project: flags.project,
    workdir: flags.workdir,
    teamId: flags.teamId,
    worker: flags.worker,
    isNew: existing === undefined,
    workdirRoot,
  });
  checkRegisteredWorkdir(name, flags.workdir, existing?.workdir);
  // Rule 6 (hub half): fresh heartbeat and a ready relay.
  checkSpawnReady(hostId, host.readiness);

  // Already running here, or a process that ended with ProviderModelNotFoundError.
  const supervised = await getSupervisedAgent(local.client, name);
  const recovering = supervised?.last_exit?.code === PROVIDER_MODEL_NOT_FOUND_EXIT;
  if (supervised && ACTIVE_SUPERVISOR_STATES.has(supervised.state) && !recovering) {
    throw agentAlreadyRunning(
      name,
      `supervised by this runtime, pid ${supervised.pid ?? '-'}, ${supervised.state}`,
    );
  }

  // A previous instance this runtime does not run (local state here, or its process ended): the hub may count
  // it running until its heartbeat goes stale; it is marked stopped there first (decision 67).
  const previous = existing ? await readAgentState(stateDir, name) : undefined;
  const previousGone = !!existing && (previous?.agent_id === existing.id || (!!supervised && !recovering));
  // The hub starts an agent only with a catalog model: refuse here rather than after registering it.
  const model = flags.model ?? existing?.model ?? undefined;
  if (!model) {
    throw usageError(
      'model_required',
      `agent "${name}" has no model`,
      'pass --model <provider/model>, an exact identifier of the catalog',
    );
  }

  // One serve port per agent: not another agent's at the hub or in the supervisor, and bindable here.
  let servePort: number | null = null;
  if (serving) {
    const taken = new Set<number>();
    for (const other of await listHostAgents(hub, workspace, hostId)) {
      if (other.name !== name && other.status !== 'evicted' && other.serve_port !== null) {
        taken.add(other.serve_port);
      }
    }
    for (const other of local.status.agents) {
      if (other.name !== name && other.serve_port !== null) taken.add(other.serve_port);
    }
    servePort = await chooseServePort({ requested: flags.servePort, taken, preferred: existing?.serve_port });
  }

  // The agent's working directory exists and is owner-only before anything is written at the hub.
  const workdir = existing?.workdir ?? flags.workdir ?? path.join(workdirRoot, name);
  try {
    await ensureOwnerOnlyDir(workdir);
  } catch (error) {
    throw new CliError({
      code: 'workdir_unavailable',
      message: `the agent's workdir ${workdir} cannot be created: ${(error as Error).message}`,
      fix: `make ${workdirRoot} writable by the runtime account`,
    });
  }

  // A recovered agent: stop supervising the dead process and clear only its runtime home.
  const runtimeHome = agentRuntimeHome(stateDir, name);
  if (supervised) await stopSupervisedAgent(local.client, name);
  if (recovering) await fs.rm(runtimeHome, { recursive: true, force: true });
  await ensureOwnerOnlyDir(runtimeHome);

  let materialized: MaterializedProviderAuth | undefined;
  if (flags.serverLocalProviderAuth) {
    materialized = await materializeProviderAuth({
      stateDir,
      agentName: name,
      runtimeHome,
      provider: model.split('/')[0]!,
      sourceFile: env.SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE!,
    });
  }

  // First hub write: register a new agent.
  const registered = existing === undefined;
  const agent: HubAgent =
    existing ??
    unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/agents', {
        params: { path: { workspace } },
        body: {
          name,
          runtime_instance_id: hostId,
          ...(capabilities.length > 0 ? { capabilities } : {}),
          ...(flags.project !== undefined ? { project_code: flags.project } : { workdir }),
          ...(flags.teamId !== undefined ? { team_id: flags.teamId } : {}),
          ...(flags.worker ? { worker: true } : {}),
          model,
          ...(servePort !== null ? { serve_port: servePort } : {}),
        },
      }),
    );
  if ((recovering || previousGone) && RUNNING_STATUSES.has(agent.status)) {
    unwrap(await hub.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId: agent.id } } }));
  }
  const runningBefore = host.running_agents - (countsOnNetworks(agent) ? 1 : 0);

  // The one runtime credential issuance of this start.
  let started;
  try {
    started = unwrap(
      await hub.POST('/api/v1/agents/{agentId}/start', {
        params: { path: { agentId: agent.id } },
        body: {
          ...(flags.spawnId !== undefined
            ? { launch_path: 'relay' as const, spawn_id: flags.spawnId }
            : { launch_path: 'direct' as const }),
          ...(flags.model !== undefined ? { model: flags.model } : {}),
          ...(servePort !== null && servePort !== agent.serve_port ? { serve_port: servePort } : {}),
        },
      }),
    );
  } catch (error) {
    if (error instanceof ApiError && error.code === 'agent_already_running') {
      throw agentAlreadyRunning(name, 'online at the hub with a fresh heartbeat');
    }
    throw error;
  }

  const credential = started.runtime_credential;
  const agentEnv: Record<string, string> = {
    HUB_URL: input.hubUrl,
    AGENT_TOKEN: started.agent_token,
    AGENT_NAME: name,
    AGENT_ID: agent.id,
    AGENT_WORKDIR: workdir,
    AGENT_RUNTIME_HOME: runtimeHome,
    AGENT_RUNTIME_CREDENTIAL: credential.token,
    AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: credential.expires_at,
    SVC_RUNTIME_INSTANCE_ID: hostId,
    ...agentHostSettings(env),
    ...(servePort !== null ? { AGENT_SERVE_PORT: String(servePort) } : {}),
    ...(materialized ? { AGENT_PROVIDER_AUTH_FILE: materialized.agent_auth_path } : {}),
  };
  const state: AgentLocalState = {
    agent_id: agent.id,
    name,
    workspace,
    runtime_instance_id: hostId,
    argv,
    workdir,
    serve_port: servePort,
    serve_public_base_url: flags.servePublicBaseUrl ?? null,
    model: started.agent.model,
    capabilities: started.agent.capabilities,
    project: flags.project ?? null,
    team_id: flags.teamId ?? null,
    started_at: started.agent.started_at ?? new Date().toISOString(),
    agent_token: started.agent_token,
    agent_token_expires_at: started.agent_token_expires_at,
    runtime_credential: credential,
  };
  await writeAgentState(stateDir, state);

  let handed: SupervisedAgent;
  try {
    handed = unwrap(
      await local.client.POST('/agents', {
        body: {
          agent_id: agent.id,
          name,
          argv,
          cwd: workdir,
          env: agentEnv,
          serve_port: servePort,
          restart: 'on-failure',
        },
      }),
    );
  } catch (error) {
    // The process never started: leave the hub and this host as if the start had not happened.
    await hub
      .POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId: agent.id } } })
      .catch(() => undefined);
    await clearAgentState(stateDir, name);
    throw new CliError({
      code: 'agent_process_not_started',
      message: `the runtime did not start the agent's process: ${(error as Error).message}`,
      fix: 'check the command and the runtime (svc internal status); the agent was stopped again at the hub',
    });
  }

  const verification = await input.progress(`Waiting for ${name} to come up (rule 7)`, () =>
    verifyStartedAgent({
      hub,
      workspace,
      hostId,
      agentId: agent.id,
      name,
      servePort,
      runningBefore,
      control: local.client,
      timeoutMs: input.verifyTimeoutMs ?? 30_000,
    }),
  );
  const publicBase = runtime.consoleRouter.publicBaseUrl.replace(/\/+$/, '');
  const route = started.agent.console_route ?? `/${workspace}/agents/${agent.id}`;
  return {
    agent_id: agent.id,
    name,
    registered,
    recovered_from_provider_model_not_found: recovering,
    runtime_instance_id: hostId,
    status: verification.hub_status,
    model: started.agent.model,
    serve_port: servePort,
    console_url: servePort !== null ? `${publicBase}${route}/global/health` : null,
    workdir,
    pid: verification.pid ?? handed.pid,
    log_file: handed.log_file || agentLogFile(stateDir, name),
    argv,
    authorization_source: credential.authorization_source,
    runtime_credential_expires_at: credential.expires_at,
    server_local_provider_auth: materialized
      ? {
          canonical_file: materialized.canonical_file,
          agent_auth_path: materialized.agent_auth_path,
          identity: materialized.identity,
        }
      : null,
    verification,
  };
}
