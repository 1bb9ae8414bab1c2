import { promises as fs } from 'node:fs';
import type { HubClient } from '@svc/contracts';
import { agentHeldStages } from '../../data/agent-held-stages';
import type { AgentSupervisor } from '../../data/agent-supervisor';
import type { HeartbeatDrain } from '../../data/runtime-heartbeat';

/**
 * How long after the runtime first sees a drain it waits before it stops an agent that holds no stage: a stage
 * the engine gave the agent just before the drain (the hub accepted its handoff) is recorded by the Workflow
 * API within the engine's hub timeout (5 s), so an agent that holds none after this window holds none for good.
 */
export const DRAIN_SETTLE_MS = 10_000;

export interface HostDrainFollower {
  /**
   * Follows the drain a heartbeat's answer named: the relay's marker, then the agents that hold no stage. Says
   * whether it stopped an agent (the runtime then reports at once, so the hub can call the host drained).
   */
  follow(drain: HeartbeatDrain): Promise<boolean>;
  /** Ends the drain locally (a fresh start): the relay's marker goes away. */
  clear(): Promise<void>;
}

/**
 * The runtime's part of a drain. While the hub says the host drains, the relay's marker file exists (the
 * relay refuses new spawns with 409 `runtime_host_draining`), and each agent this runtime supervises is stopped
 * (and marked stopped at the hub) once the Workflow API says it holds no open stage. When the drain ends the
 * marker goes away; agents the drain stopped stay stopped.
 */
export function createHostDrainFollower(options: {
  supervisor: AgentSupervisor;
  hub: HubClient;
  markerFile: string;
  clientName: string;
  log: (line: string) => void;
  settleMs?: number;
  now?: () => number;
}): HostDrainFollower {
  const now = options.now ?? Date.now;
  const settleMs = options.settleMs ?? DRAIN_SETTLE_MS;
  let seenAt: number | null = null;

  const stopIdleAgents = async (): Promise<boolean> => {
    let stoppedAny = false;
    for (const agent of options.supervisor.list()) {
      if (agent.state === 'stopped') continue;
      const held = await agentHeldStages(options.supervisor.environmentOf(agent.name), options.clientName);
      if (held === 'unknown' || (typeof held === 'number' && held > 0)) continue;
      await options.supervisor.stop(agent.name);
      stoppedAny = true;
      let marked: boolean;
      try {
        const res = await options.hub.POST('/api/v1/agents/{agentId}/stop', {
          params: { path: { agentId: agent.agent_id } },
          signal: AbortSignal.timeout(10_000),
        });
        marked = res.response.ok;
      } catch {
        marked = false;
      }
      options.log(
        `drain: agent ${agent.name} holds no stage${held === 'refused' ? ' (its token is refused)' : ''}; stopped${marked ? '' : ' (the hub could not mark it stopped)'}`,
      );
    }
    return stoppedAny;
  };

  const clear = async () => {
    await fs.rm(options.markerFile, { force: true });
    if (seenAt !== null) options.log('drain: ended; the host takes spawns and stages again');
    seenAt = null;
  };

  return {
    async follow(drain) {
      if (!drain || drain.state === 'active') {
        await clear();
        return false;
      }
      if (seenAt === null) {
        seenAt = now();
        await fs.writeFile(options.markerFile, `${drain.requested_at ?? ''}\n`, { mode: 0o600 });
        options.log(
          `drain: asked at ${drain.requested_at ?? '?'}${drain.requested_by ? ` by ${drain.requested_by}` : ''}; no new spawns or stages, agents stop once they hold no stage`,
        );
      }
      return now() - seenAt >= settleMs ? stopIdleAgents() : false;
    },
    clear,
  };
}
