import type { Agent, RuntimeHost } from '../generated/prisma/client';

/** A host heartbeats every ~10 s; one older than this is not fresh. */
export const HOST_HEARTBEAT_FRESH_SECONDS = 45;
/** An agent heartbeats every ~10 s; one older than this no longer counts as running. */
export const AGENT_HEARTBEAT_FRESH_SECONDS = 90;
/** Agent statuses that count as running on the Networks view. */
export const RUNNING_AGENT_STATUSES = ['online', 'idle', 'busy'] as const;

export interface HostReadiness {
  heartbeat_fresh: boolean;
  relay_ready: boolean;
  console_router_ready: boolean;
  /** Fresh heartbeat and a ready relay: the host may receive spawns. */
  spawn_ready: boolean;
  reasons: string[];
}

/** Spawn readiness of a host as the spec defines it: a fresh heartbeat and a ready relay. */
export function hostReadiness(
  host: Pick<RuntimeHost, 'lastHeartbeatAt' | 'relayReady' | 'consoleRouterReady'>,
  now: Date,
): HostReadiness {
  const fresh =
    host.lastHeartbeatAt !== null &&
    now.getTime() - host.lastHeartbeatAt.getTime() <= HOST_HEARTBEAT_FRESH_SECONDS * 1000;
  const reasons: string[] = [];
  if (!host.lastHeartbeatAt) reasons.push('the host has never sent a heartbeat');
  else if (!fresh) reasons.push(`no heartbeat for more than ${HOST_HEARTBEAT_FRESH_SECONDS} s`);
  if (!host.relayReady) reasons.push('the relay is not ready');
  if (!host.consoleRouterReady) reasons.push('the console router is not ready');
  return {
    heartbeat_fresh: fresh,
    relay_ready: host.relayReady,
    console_router_ready: host.consoleRouterReady,
    spawn_ready: fresh && host.relayReady,
    reasons,
  };
}

/** The Prisma filter for agents that count as running right now. */
export function runningAgentFilter(now: Date) {
  return {
    status: { in: [...RUNNING_AGENT_STATUSES] },
    lastHeartbeatAt: { gt: new Date(now.getTime() - AGENT_HEARTBEAT_FRESH_SECONDS * 1000) },
  };
}

/** {@link runningAgentFilter} as a rule on a row already read: the same comparison, to the millisecond. */
export function matchesRunningFilter(agent: Pick<Agent, 'status' | 'lastHeartbeatAt'>, now: Date): boolean {
  return (
    (RUNNING_AGENT_STATUSES as readonly string[]).includes(agent.status) &&
    agent.lastHeartbeatAt !== null &&
    agent.lastHeartbeatAt.getTime() > now.getTime() - AGENT_HEARTBEAT_FRESH_SECONDS * 1000
  );
}

/** Running with a heartbeat fresh enough to count on the Networks view. */
export function isRunning(agent: Pick<Agent, 'status' | 'lastHeartbeatAt'>, now: Date): boolean {
  return (
    (RUNNING_AGENT_STATUSES as readonly string[]).includes(agent.status) &&
    agent.lastHeartbeatAt !== null &&
    now.getTime() - agent.lastHeartbeatAt.getTime() <= AGENT_HEARTBEAT_FRESH_SECONDS * 1000
  );
}
