import { promises as fs } from 'node:fs';
import path from 'node:path';
import { ensureOwnerOnlyDir, SECRET_FILE_MODE, writeSecretFile } from './secret-files';

/**
 * What a direct `svc start` leaves on the runtime host for one agent, in
 * `<state dir>/agents/<name>/state.json` (mode 0600, directory 0700). It holds the agent's tokens, so it is
 * never printed; `svc stop` removes it and keeps nothing but the hub's agent id.
 */
export interface AgentLocalState {
  agent_id: string;
  name: string;
  workspace: string;
  runtime_instance_id: string;
  /** Argv of the agent process (`--command`, split without a shell). */
  argv: string[];
  workdir: string;
  serve_port: number | null;
  serve_public_base_url: string | null;
  model: string | null;
  capabilities: string[];
  project: string | null;
  team_id: string | null;
  started_at: string;
  agent_token: string;
  agent_token_expires_at: string;
  runtime_credential: {
    token: string;
    expires_at: string;
    provider: string;
    model: string;
    authorization_source: 'hub_managed' | 'workspace_provider' | 'server_local';
  } | null;
}

/** The agent's own owner-only directory: its state file, its log and its provider runtime home. */
export function agentDir(stateDir: string, name: string): string {
  return path.join(stateDir, 'agents', name);
}

/** The agent's provider runtime home (`AGENT_RUNTIME_HOME`): the only thing a stale-model recovery clears. */
export function agentRuntimeHome(stateDir: string, name: string): string {
  return path.join(agentDir(stateDir, name), 'runtime');
}

export function agentLogFile(stateDir: string, name: string): string {
  return path.join(agentDir(stateDir, name), 'agent.log');
}

function stateFile(stateDir: string, name: string): string {
  return path.join(agentDir(stateDir, name), 'state.json');
}

export async function readAgentState(stateDir: string, name: string): Promise<AgentLocalState | undefined> {
  const file = stateFile(stateDir, name);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (((await fs.stat(file)).mode & 0o777) !== SECRET_FILE_MODE) await fs.chmod(file, SECRET_FILE_MODE);
  return JSON.parse(text) as AgentLocalState;
}

export async function writeAgentState(stateDir: string, state: AgentLocalState): Promise<void> {
  await ensureOwnerOnlyDir(agentDir(stateDir, state.name));
  await writeSecretFile(stateFile(stateDir, state.name), `${JSON.stringify(state, null, 2)}\n`);
}

/** Names of the agents with local state on this host, sorted. */
export async function listAgentStates(stateDir: string): Promise<AgentLocalState[]> {
  let names: string[];
  try {
    names = await fs.readdir(path.join(stateDir, 'agents'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const states = await Promise.all(names.sort().map((name) => readAgentState(stateDir, name)));
  return states.filter((s): s is AgentLocalState => s !== undefined);
}

/** Clears the agent's local running state (state file and runtime home); its log is kept for inspection. */
export async function clearAgentState(stateDir: string, name: string): Promise<void> {
  await fs.rm(stateFile(stateDir, name), { force: true });
  await fs.rm(agentRuntimeHome(stateDir, name), { recursive: true, force: true });
}
