import { unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { findNetworkHost } from '../../data/host-agents';
import { getSupervisedAgent } from '../../data/local-runtime';
import type { RuntimeControlClient } from '../../data/runtime-control-client';
import { httpListenerAnswers } from '../../data/serve-port';
import { CliError } from '../../domain/cli-error';
import { EXIT } from '../../domain/exit-codes';

export interface StartVerification {
  /** A local listener answers on the serve port (true when the agent does not serve). */
  listener: boolean;
  /** The hub shows the agent running (`online`, `idle` or `busy`) on this host's `rti_…`. */
  hub_online: boolean;
  hub_status: string;
  hub_runtime_instance_id: string | null;
  /** The Networks running-agents count of the host went above its count before the start. */
  running_count_rose: boolean;
  running_agents_before: number;
  running_agents_after: number | null;
  pid: number | null;
  elapsed_ms: number;
}

export interface VerifyStartedAgentInput {
  hub: HubClient;
  workspace: string;
  hostId: string;
  agentId: string;
  name: string;
  servePort: number | null;
  /** The host's running count before the start, without this agent. */
  runningBefore: number;
  control: RuntimeControlClient;
  timeoutMs: number;
  pollMs?: number;
}

/**
 * Direct start rule 7: polls until a local listener answers on the serve port, the hub shows the agent
 * running with `runtime_instance_id` equal to this host's `rti_…`, and the Networks running count of the host
 * has risen. A process that ended meanwhile fails at once with its log file; the deadline is exit 5.
 */
export async function verifyStartedAgent(input: VerifyStartedAgentInput): Promise<StartVerification> {
  const began = Date.now();
  const result: StartVerification = {
    listener: input.servePort === null,
    hub_online: false,
    hub_status: 'unknown',
    hub_runtime_instance_id: null,
    running_count_rose: false,
    running_agents_before: input.runningBefore,
    running_agents_after: null,
    pid: null,
    elapsed_ms: 0,
  };
  for (;;) {
    const supervised = await getSupervisedAgent(input.control, input.name);
    if (!supervised || supervised.state === 'failed' || supervised.state === 'stopped') {
      const exit = supervised?.last_exit;
      throw new CliError({
        code: 'agent_process_exited',
        message: `the process of agent "${input.name}" ended${exit ? ` (exit code ${exit.code ?? '-'}, signal ${exit.signal ?? '-'})` : ''} before it was up`,
        fix: `read its log${supervised?.log_file ? ` ${supervised.log_file}` : ''}, fix the command, then svc start --name ${input.name} again`,
        details: { log_file: supervised?.log_file ?? null, last_exit: exit ?? null },
      });
    }
    result.pid = supervised.pid;
    if (!result.listener && input.servePort !== null) {
      result.listener = await httpListenerAnswers(input.servePort);
    }
    if (!result.hub_online) {
      const agent = unwrap(
        await input.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: input.agentId } } }),
      );
      result.hub_status = agent.status;
      result.hub_runtime_instance_id = agent.runtime_instance_id;
      result.hub_online =
        ['online', 'idle', 'busy'].includes(agent.status) &&
        agent.runtime_instance_id === input.hostId &&
        input.hostId.startsWith('rti_');
    }
    if (!result.running_count_rose) {
      const host = await findNetworkHost(input.hub, input.workspace, input.hostId);
      result.running_agents_after = host?.running_agents ?? null;
      result.running_count_rose = host !== undefined && host.running_agents > input.runningBefore;
    }
    result.elapsed_ms = Date.now() - began;
    if (result.listener && result.hub_online && result.running_count_rose) return result;
    if (Date.now() - began >= input.timeoutMs) {
      const missing = [
        result.listener ? null : `no listener on 127.0.0.1:${input.servePort}`,
        result.hub_online
          ? null
          : `hub status ${result.hub_status} on ${result.hub_runtime_instance_id ?? '(no host)'}`,
        result.running_count_rose ? null : 'the Networks running count did not rise',
      ].filter(Boolean);
      throw new CliError({
        code: 'start_not_verified',
        message: `agent "${input.name}" was started but is not up after ${Math.round(input.timeoutMs / 1000)} s: ${missing.join('; ')} (direct start rule 7)`,
        fix: `check its log and svc list; svc stop ${input.name} to stop it`,
        exit: EXIT.timeout,
        details: { verification: result },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, input.pollMs ?? 500));
  }
}
