import { listAgentStates } from '../../data/agent-state';
import type { RuntimeControlStatus } from '../../data/control-server';
import { CliError } from '../../domain/cli-error';
import { readControlStatus } from './read-runtime-status';

export interface InternalStatus {
  runtime: RuntimeControlStatus;
  /** Agents with local state on this host (from `svc start`), without their tokens. */
  local_agents: Array<{
    name: string;
    agent_id: string;
    runtime_instance_id: string;
    started_at: string;
    serve_port: number | null;
    workdir: string;
    supervised: boolean;
  }>;
}

/** `svc internal status`: the runtime's control status and the local agent states; exit 1 when it is not running. */
export async function readInternalStatus(stateDir: string): Promise<InternalStatus> {
  const local = await readControlStatus(stateDir);
  if (!local.running) {
    throw new CliError({
      code: 'runtime_not_running',
      message: `runtime is not running (${local.detail})`,
      fix: 'svc runtime up (or: systemctl start svc-runtime)',
    });
  }
  const supervised = new Set(local.status.agents.map((a) => a.name));
  const states = await listAgentStates(stateDir);
  return {
    runtime: local.status,
    local_agents: states.map((s) => ({
      name: s.name,
      agent_id: s.agent_id,
      runtime_instance_id: s.runtime_instance_id,
      started_at: s.started_at,
      serve_port: s.serve_port,
      workdir: s.workdir,
      supervised: supervised.has(s.name),
    })),
  };
}
