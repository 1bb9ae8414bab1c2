import { ApiError, unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import { redactText } from '../domain/redact';
import { probe } from './local-service-probe';

export type HeartbeatBody = HubApi.components['schemas']['RuntimeHostHeartbeatRequest'];
type ConsoleRoute = NonNullable<HeartbeatBody['console_routes']>[number];

export interface Readiness {
  ready: boolean;
  detail: string | null;
}

export interface ServiceReadiness {
  relay: Readiness;
  /**
   * The host's console routers together: ready while at least one is (the load balancer in front of several
   * sends every request to a ready one); otherwise the first one's reason.
   */
  console_router: Readiness;
  /** Each console router's own readiness, in order. */
  console_routers: Readiness[];
  /** The routers' per-agent activity from their `/status`, merged (the latest per agent). */
  console_routes: ConsoleRoute[];
}

type RouteActivity = { agent_id: string; last_activity_at: string | null };

/** The latest activity per agent over every router's routes. */
function mergeActivity(lists: RouteActivity[][]): ConsoleRoute[] {
  const latest = new Map<string, string | null>();
  for (const routes of lists) {
    for (const r of routes) {
      const seen = latest.get(r.agent_id);
      if (seen === undefined || (r.last_activity_at !== null && (seen === null || r.last_activity_at > seen)))
        latest.set(r.agent_id, r.last_activity_at);
    }
  }
  return [...latest].slice(0, 10_000).map(([agent_id, last_activity_at]) => ({ agent_id, last_activity_at }));
}

/** Reads the relay's and each router's `/readyz` and each router's `/status` (loopback). */
export async function readServiceReadiness(
  relayUrl: string,
  routerUrls: string[],
): Promise<ServiceReadiness> {
  const [relay, ...routers] = await Promise.all([
    probe(`${relayUrl}/readyz`),
    ...routerUrls.map(async (url) => {
      const [ready, status] = await Promise.all([probe(`${url}/readyz`), probe(`${url}/status`)]);
      return { ready, status };
    }),
  ]);
  const each = routers.map(({ ready }) => ({
    ready: ready.ok,
    detail: ready.detail && redactText(ready.detail),
  }));
  const routes = routers.map(({ status }) =>
    status.ok ? ((status.body as { routes?: RouteActivity[] }).routes ?? []) : [],
  );
  return {
    relay: { ready: relay!.ok, detail: relay!.detail && redactText(relay!.detail) },
    console_router: each.find((r) => r.ready) ?? each[0] ?? { ready: false, detail: 'no console router' },
    console_routers: each,
    console_routes: mergeActivity(routes),
  };
}

/**
 * The readiness part of a heartbeat: each service is ready when its process runs and its `/readyz` says so;
 * when it is not, its own reason (or its process state) goes along, redacted and cut to 500 characters.
 */
export function readinessReport(
  relay: { running(): boolean; state: string },
  routers: Array<{ running(): boolean; state: string; name?: string }>,
  readiness: ServiceReadiness,
): Pick<HeartbeatBody, 'relay_ready' | 'console_router_ready' | 'relay_detail' | 'console_router_detail'> {
  const relayReady = relay.running() && readiness.relay.ready;
  // The host serves consoles while one of its routers does (several sit behind a load balancer).
  const routerReady = routers.some((r, i) => r.running() && readiness.console_routers[i]?.ready === true);
  const relayDetail = relay.running() ? readiness.relay.detail : `relay ${relay.state}`;
  const first = routers[0];
  const routerDetail =
    !first || first.running()
      ? readiness.console_router.detail
      : `${routers.length > 1 ? (first.name ?? 'console router') : 'console router'} ${first.state}`;
  return {
    relay_ready: relayReady,
    console_router_ready: routerReady,
    ...(!relayReady && relayDetail ? { relay_detail: relayDetail.slice(0, 500) } : {}),
    ...(!routerReady && routerDetail ? { console_router_detail: routerDetail.slice(0, 500) } : {}),
  };
}

/** The tunnel a heartbeat's answer names: null when the host is in no environment, undefined from an older hub. */
export type HeartbeatTunnel = HubApi.components['schemas']['RuntimeHost']['tunnel'];

/** What the hub says of the key the heartbeat came with (current, superseded by a rotation, …). */
export type HeartbeatKeyStatus = HubApi.components['schemas']['RuntimeHostKeyStatus'];

/** The host's drain as the hub says it (undefined from an older hub). */
export type HeartbeatDrain = HubApi.components['schemas']['RuntimeHost']['drain'];

/**
 * A heartbeat's outcome: the error line (and the HTTP status when the hub answered) when the hub refused or
 * was unreachable, else the environment's tunnel and the state of the key the heartbeat came with.
 */
export type HeartbeatResult =
  | { error: string; status: number | null; tunnel?: undefined; runtimeKey?: undefined; drain?: undefined }
  | {
      error: null;
      status: 200;
      tunnel: HeartbeatTunnel;
      runtimeKey: HeartbeatKeyStatus | undefined;
      drain: HeartbeatDrain;
    };

/** Sends one host heartbeat with the runtime key. */
export async function sendHeartbeat(
  hub: HubClient,
  hostId: string,
  body: HeartbeatBody,
): Promise<HeartbeatResult> {
  try {
    const host = unwrap(
      await hub.POST('/api/v1/runtime-hosts/{hostId}/heartbeat', {
        params: { path: { hostId } },
        body,
        signal: AbortSignal.timeout(10_000),
      }),
    );
    return {
      error: null,
      status: 200,
      tunnel: host.tunnel,
      runtimeKey: host.readiness.runtime_key,
      drain: host.drain,
    };
  } catch (error) {
    if (error instanceof ApiError)
      return {
        error: redactText(`HTTP ${error.status} ${error.code}: ${error.message}`),
        status: error.status,
      };
    const e = error as { name?: string; cause?: { code?: string }; message?: string };
    return {
      status: null,
      error: `the hub did not answer (${e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? redactText(e.message ?? 'error'))})`,
    };
  }
}
