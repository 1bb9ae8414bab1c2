import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import {
  presentHeartbeatAnswer,
  presentNetworkHost,
  presentRuntimeConfig,
  presentRuntimeHost,
} from '../presenters/runtime';
import { drainRuntimeHost } from '../use-cases/runtime/drain-runtime-host';
import { resumeRuntimeHost } from '../use-cases/runtime/resume-runtime-host';
import { getNetworksView } from '../use-cases/runtime/get-networks-view';
import { getRuntimeHost } from '../use-cases/runtime/get-runtime-host';
import { listRuntimeHosts } from '../use-cases/runtime/list-runtime-hosts';
import { pullRuntimeConfig } from '../use-cases/runtime/pull-runtime-config';
import { recordRuntimeHostHeartbeat } from '../use-cases/runtime/record-runtime-host-heartbeat';
import { registerRuntimeHost } from '../use-cases/runtime/register-runtime-host';
import { rotateRelayToken } from '../use-cases/runtime/rotate-relay-token';
import { rotateRuntimeKey } from '../use-cases/runtime/rotate-runtime-key';
import { setRuntimeHostLimits } from '../use-cases/runtime/set-runtime-host-limits';
import type { HubHandlers } from './types';
import { actorOf, participantOf } from './types';

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The header the router authenticated an API key from (express lower-cases header names). */
function presentedApiKey(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['x-api-key'];
  return Array.isArray(value) ? value[0] : value;
}

export function runtimeHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listRuntimeHosts'
  | 'registerRuntimeHost'
  | 'getRuntimeHost'
  | 'setRuntimeHostLimits'
  | 'recordRuntimeHostHeartbeat'
  | 'rotateRelayToken'
  | 'getNetworks'
  | 'getRuntimeConfig'
  | 'rotateRuntimeKey'
  | 'drainRuntimeHost'
  | 'resumeRuntimeHost'
> {
  return {
    async listRuntimeHosts(ctx) {
      const hosts = await listRuntimeHosts(deps, workspaceOf(ctx).id);
      const now = deps.now();
      return {
        status: 200,
        body: { data: hosts.map(({ host, bundles }) => presentRuntimeHost(host, bundles, now)) },
      };
    },
    async registerRuntimeHost(ctx) {
      const { body } = ctx;
      const { host, relayToken } = await registerRuntimeHost(deps, actorOf(ctx.actor), workspaceOf(ctx).id, {
        name: body.name,
        hostname: body.hostname,
        workdirRoot: body.workdir_root,
        consolePublicBaseUrl: body.console_public_base_url,
        relayPublicUrl: body.relay_public_url,
        consoleRouter: body.console_router && {
          bindHost: body.console_router.bind_host,
          listenPort: body.console_router.listen_port,
          routePrefix: body.console_router.route_prefix,
        },
        relay: body.relay && { bindHost: body.relay.bind_host, listenPort: body.relay.listen_port },
        limits: body.limits && {
          maxConcurrentSpawns: body.limits.max_concurrent_spawns,
          maxAgents: body.limits.max_agents,
        },
        requestId: ctx.requestId,
      });
      return {
        status: 201,
        body: { data: { host: presentRuntimeHost(host, [], deps.now()), relay_token: relayToken } },
        headers: NO_STORE,
      };
    },
    async getRuntimeHost(ctx) {
      const { host, bundles } = await getRuntimeHost(deps, ctx.actor, ctx.params.hostId);
      return { status: 200, body: { data: presentRuntimeHost(host, bundles, deps.now()) } };
    },
    async setRuntimeHostLimits(ctx) {
      const { host, bundles } = await setRuntimeHostLimits(deps, actorOf(ctx.actor), ctx.params.hostId, {
        maxConcurrentSpawns: ctx.body.max_concurrent_spawns,
        maxAgents: ctx.body.max_agents,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentRuntimeHost(host, bundles, deps.now()) } };
    },
    async recordRuntimeHostHeartbeat(ctx) {
      const { host, bundles, environment } = await recordRuntimeHostHeartbeat(
        deps,
        actorOf(ctx.actor),
        ctx.params.hostId,
        {
          relayReady: ctx.body.relay_ready,
          consoleRouterReady: ctx.body.console_router_ready,
          runtimeVersion: ctx.body.runtime_version,
          bundleId: ctx.body.bundle_id,
          tunnelConnectorReady: ctx.body.tunnel_connector_ready,
          relayDetail: ctx.body.relay_detail,
          consoleRouterDetail: ctx.body.console_router_detail,
          consoleRoutes: ctx.body.console_routes?.map((route) => ({
            agentId: route.agent_id,
            lastActivityAt: route.last_activity_at,
          })),
        },
      );
      return { status: 200, body: { data: presentHeartbeatAnswer(host, bundles, environment, deps.now()) } };
    },
    async rotateRelayToken(ctx) {
      const rotated = await rotateRelayToken(
        deps,
        participantOf(ctx.actor),
        ctx.params.hostId,
        ctx.requestId,
      );
      return {
        status: 200,
        body: { data: { relay_token: rotated.relayToken, rotated_at: rotated.rotatedAt.toISOString() } },
        headers: NO_STORE,
      };
    },
    async drainRuntimeHost(ctx) {
      const { host, bundles } = await drainRuntimeHost(
        deps,
        actorOf(ctx.actor),
        ctx.params.hostId,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentRuntimeHost(host, bundles, deps.now()) } };
    },
    async resumeRuntimeHost(ctx) {
      const { host, bundles } = await resumeRuntimeHost(
        deps,
        actorOf(ctx.actor),
        ctx.params.hostId,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentRuntimeHost(host, bundles, deps.now()) } };
    },
    async getNetworks(ctx) {
      const workspace = workspaceOf(ctx);
      const view = await getNetworksView(deps, workspace.id);
      return {
        status: 200,
        body: {
          data: {
            workspace: { id: workspace.id, slug: workspace.slug },
            hosts: view.hosts.map((host) => presentNetworkHost(host, view.generatedAt)),
            generated_at: view.generatedAt.toISOString(),
          },
        },
      };
    },
    async getRuntimeConfig(ctx) {
      const workspace = workspaceOf(ctx);
      const pulled = await pullRuntimeConfig(deps, {
        actor: actorOf(ctx.actor),
        workspace,
        runtimeInstanceId: ctx.query.runtime_instance_id,
        presentedApiKey: presentedApiKey(ctx.req.headers),
        requestId: ctx.requestId,
      });
      return {
        status: 200,
        body: { data: presentRuntimeConfig(workspace, pulled) },
        headers: NO_STORE,
      };
    },
    async rotateRuntimeKey(ctx) {
      const workspace = workspaceOf(ctx);
      const rotated = await rotateRuntimeKey(deps, {
        actor: participantOf(ctx.actor),
        workspace,
        runtimeInstanceId: ctx.body.runtime_instance_id,
        overlapSeconds: ctx.body.overlap_seconds,
        requestId: ctx.requestId,
      });
      return {
        status: 200,
        body: { data: presentRuntimeConfig(workspace, rotated) },
        headers: NO_STORE,
      };
    },
  };
}
