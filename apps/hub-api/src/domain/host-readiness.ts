import type { Agent, RuntimeHost } from '../generated/prisma/client';

/** A host heartbeats every ~10 s; one older than this is not fresh. */
export const HOST_HEARTBEAT_FRESH_SECONDS = 45;
/**
 * A host silent this long (three missed heartbeats) is lost: no spawn goes to it, and the presence sweep marks
 * its running agents `lost`, so the workflow engine gives their stages to other owners.
 */
export const HOST_LOST_SECONDS = 30;
/** An agent heartbeats every ~10 s; one older than this no longer counts as running. */
export const AGENT_HEARTBEAT_FRESH_SECONDS = 90;
/** Agent statuses that count as running on the Networks view. */
export const RUNNING_AGENT_STATUSES = ['online', 'idle', 'busy'] as const;

export type ComponentState = 'ready' | 'not_ready' | 'unknown';

export type HostCauseCode =
  | 'never_heartbeated'
  | 'heartbeat_stale'
  | 'heartbeat_late'
  | 'runtime_key_superseded'
  | 'runtime_key_revoked'
  | 'relay_not_ready'
  | 'console_router_not_ready'
  | 'draining';

export interface HostCause {
  code: HostCauseCode;
  message: string;
  at?: string | null;
}

export interface HostKeyStatus {
  state: 'current' | 'superseded' | 'revoked' | 'other' | 'unknown';
  key_id: string | null;
  rotated_at: string | null;
  rotated_by: string | null;
  valid_until: string | null;
}

export interface HostReadiness {
  heartbeat_fresh: boolean;
  /** A fresh heartbeat said the relay is ready. */
  relay_ready: boolean;
  console_router_ready: boolean;
  relay_state: ComponentState;
  console_router_state: ComponentState;
  /** Fresh heartbeat, a ready relay and no drain: the host may receive spawns. */
  spawn_ready: boolean;
  reasons: string[];
  causes: HostCause[];
  runtime_key: HostKeyStatus;
}

export type ReadinessFacts = Pick<
  RuntimeHost,
  | 'lastHeartbeatAt'
  | 'relayReady'
  | 'consoleRouterReady'
  | 'relayDetail'
  | 'consoleRouterDetail'
  | 'runtimeApiKeyId'
  | 'runtimeKeyRotatedAt'
  | 'runtimeKeyRotatedBy'
  | 'previousRuntimeApiKeyId'
  | 'previousRuntimeKeyValidUntil'
  | 'heartbeatApiKeyId'
  | 'heartbeatKeyRevokedAt'
  | 'drainRequestedAt'
>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The key the host's latest heartbeat used, judged against the host's current and previous runtime keys. */
export function hostKeyStatus(host: ReadinessFacts, now: Date): HostKeyStatus {
  const base = {
    key_id: host.heartbeatApiKeyId,
    rotated_at: iso(host.runtimeKeyRotatedAt),
    rotated_by: host.runtimeKeyRotatedBy,
  };
  if (!host.heartbeatApiKeyId) return { state: 'unknown', ...base, valid_until: null };
  if (host.heartbeatKeyRevokedAt) {
    return { state: 'revoked', ...base, valid_until: iso(host.heartbeatKeyRevokedAt) };
  }
  if (host.heartbeatApiKeyId === host.runtimeApiKeyId)
    return { state: 'current', ...base, valid_until: null };
  if (host.heartbeatApiKeyId === host.previousRuntimeApiKeyId) {
    const until = host.previousRuntimeKeyValidUntil;
    const state = until && until.getTime() <= now.getTime() ? 'revoked' : 'superseded';
    return { state, ...base, valid_until: iso(until) };
  }
  return { state: 'other', ...base, valid_until: null };
}

function keyCause(key: HostKeyStatus): HostCause | null {
  const by = key.rotated_by ? ` by ${key.rotated_by}` : '';
  if (key.state === 'superseded') {
    return {
      code: 'runtime_key_superseded',
      message: `key superseded at ${key.rotated_at ?? 'an unknown time'}${by}, valid until ${key.valid_until ?? 'unknown'}; pull the runtime config on the host (svc config pull-runtime)`,
      at: key.rotated_at,
    };
  }
  if (key.state === 'revoked') {
    const rotated = key.rotated_at ? ` (rotated at ${key.rotated_at}${by})` : '';
    return {
      code: 'runtime_key_revoked',
      message: `key revoked at ${key.valid_until ?? 'an unknown time'}${rotated}; the hub refuses the host's heartbeats: pull the runtime config on the host (svc config pull-runtime)`,
      at: key.valid_until,
    };
  }
  return null;
}

/**
 * Readiness of a host from its latest heartbeat. The relay's and the router's flags are only believed while
 * the heartbeat is fresh: a stale host's components are `unknown`, never ready. Every way the host falls short
 * is one cause with its own message (no heartbeat since T, its key superseded or revoked, the relay or the
 * router failing with the reason they gave).
 */
export function hostReadiness(host: ReadinessFacts, now: Date): HostReadiness {
  const fresh =
    host.lastHeartbeatAt !== null &&
    now.getTime() - host.lastHeartbeatAt.getTime() <= HOST_HEARTBEAT_FRESH_SECONDS * 1000;
  const lost =
    host.lastHeartbeatAt === null ||
    now.getTime() - host.lastHeartbeatAt.getTime() > HOST_LOST_SECONDS * 1000;
  const key = hostKeyStatus(host, now);
  const causes: HostCause[] = [];
  if (!host.lastHeartbeatAt) {
    causes.push({ code: 'never_heartbeated', message: 'the host has never sent a heartbeat', at: null });
  } else if (!fresh) {
    causes.push({
      code: 'heartbeat_stale',
      message: `no heartbeat since ${host.lastHeartbeatAt.toISOString()} (more than ${HOST_HEARTBEAT_FRESH_SECONDS} s)`,
      at: host.lastHeartbeatAt.toISOString(),
    });
  } else if (lost) {
    causes.push({
      code: 'heartbeat_late',
      message: `no heartbeat since ${host.lastHeartbeatAt.toISOString()} (more than ${HOST_LOST_SECONDS} s): no spawn goes to the host and its agents are marked lost`,
      at: host.lastHeartbeatAt.toISOString(),
    });
  }
  const keyProblem = keyCause(key);
  if (keyProblem) causes.push(keyProblem);
  const relayState: ComponentState = !fresh ? 'unknown' : host.relayReady ? 'ready' : 'not_ready';
  const routerState: ComponentState = !fresh ? 'unknown' : host.consoleRouterReady ? 'ready' : 'not_ready';
  if (relayState === 'not_ready') {
    causes.push({
      code: 'relay_not_ready',
      message: `the relay is not ready${host.relayDetail ? `: ${host.relayDetail}` : ''}`,
    });
  }
  if (routerState === 'not_ready') {
    causes.push({
      code: 'console_router_not_ready',
      message: `the console router is not ready${host.consoleRouterDetail ? `: ${host.consoleRouterDetail}` : ''}`,
    });
  }
  if (host.drainRequestedAt) {
    causes.push({
      code: 'draining',
      message: `draining since ${host.drainRequestedAt.toISOString()}: the host takes no new spawns or stages`,
      at: host.drainRequestedAt.toISOString(),
    });
  }
  return {
    heartbeat_fresh: fresh,
    relay_ready: relayState === 'ready',
    console_router_ready: routerState === 'ready',
    relay_state: relayState,
    console_router_state: routerState,
    // A host late past the lost threshold takes no spawn, though its last heartbeat still counts as fresh.
    spawn_ready: fresh && !lost && host.relayReady && !host.drainRequestedAt,
    reasons: causes.map((cause) => cause.message),
    causes,
    runtime_key: key,
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

export type DrainState = 'active' | 'draining' | 'drained';

export interface HostDrain {
  state: DrainState;
  requested_at: string | null;
  requested_by: string | null;
  drained_at: string | null;
}

/** A host's drain as the API shows it: `drained` once its last agent stopped, `draining` until then. */
export function hostDrain(
  host: Pick<RuntimeHost, 'drainRequestedAt' | 'drainRequestedBy' | 'drainedAt'>,
): HostDrain {
  if (!host.drainRequestedAt) {
    return { state: 'active', requested_at: null, requested_by: null, drained_at: null };
  }
  return {
    state: host.drainedAt ? 'drained' : 'draining',
    requested_at: host.drainRequestedAt.toISOString(),
    requested_by: host.drainRequestedBy,
    drained_at: iso(host.drainedAt),
  };
}
