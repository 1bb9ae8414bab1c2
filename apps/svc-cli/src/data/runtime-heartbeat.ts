import { ApiError, unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import { redactText } from '../domain/redact';
import { probe } from './local-service-probe';

export type HeartbeatBody = HubApi.components['schemas']['RuntimeHostHeartbeatRequest'];
type ConsoleRoute = NonNullable<HeartbeatBody['console_routes']>[number];

export interface ServiceReadiness {
  relay: { ready: boolean; detail: string | null };
  console_router: { ready: boolean; detail: string | null };
  /** The router's per-agent activity from its `/status` (empty when it did not answer). */
  console_routes: ConsoleRoute[];
}

/** Reads the relay's and the router's `/readyz` and the router's `/status` (loopback). */
export async function readServiceReadiness(relayUrl: string, routerUrl: string): Promise<ServiceReadiness> {
  const [relay, router, routerStatus] = await Promise.all([
    probe(`${relayUrl}/readyz`),
    probe(`${routerUrl}/readyz`),
    probe(`${routerUrl}/status`),
  ]);
  const routes = routerStatus.ok
    ? ((routerStatus.body as { routes?: Array<{ agent_id: string; last_activity_at: string | null }> })
        .routes ?? [])
    : [];
  return {
    relay: { ready: relay.ok, detail: relay.detail && redactText(relay.detail) },
    console_router: { ready: router.ok, detail: router.detail && redactText(router.detail) },
    console_routes: routes
      .slice(0, 10_000)
      .map((r) => ({ agent_id: r.agent_id, last_activity_at: r.last_activity_at })),
  };
}

/**
 * The readiness part of a heartbeat: each service is ready when its process runs and its `/readyz` says so;
 * when it is not, its own reason (or its process state) goes along, redacted and cut to 500 characters.
 */
export function readinessReport(
  relay: { running(): boolean; state: string },
  router: { running(): boolean; state: string },
  readiness: ServiceReadiness,
): Pick<HeartbeatBody, 'relay_ready' | 'console_router_ready' | 'relay_detail' | 'console_router_detail'> {
  const relayReady = relay.running() && readiness.relay.ready;
  const routerReady = router.running() && readiness.console_router.ready;
  const relayDetail = relay.running() ? readiness.relay.detail : `relay ${relay.state}`;
  const routerDetail = router.running() ? readiness.console_router.detail : `console router ${router.state}`;
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
