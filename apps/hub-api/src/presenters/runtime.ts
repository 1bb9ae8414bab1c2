import type { HubApi } from '@svc/contracts';
import type { RuntimeHost, Workspace } from '../generated/prisma/client';
import type { NetworkHostView } from '../use-cases/runtime/get-networks-view';
import { hostDrain, hostReadiness } from '../domain/host-readiness';
import type { PulledRuntimeConfig } from '../use-cases/runtime/pull-runtime-config';
import { publicUrlsOf } from '../domain/tunnel-urls';
import { presentTunnelSummary } from './runtime-environments';
import type { HostEnvironment } from '../data/runtime-environments.lookups';

type Schemas = HubApi.components['schemas'];

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** A runtime host as the inventory shows it: never its relay token, hash or sealed copy. */
export function presentRuntimeHost(host: RuntimeHost, bundles: string[], now: Date): Schemas['RuntimeHost'] {
  return {
    id: host.id,
    workspace_id: host.workspaceId,
    name: host.name,
    hostname: host.hostname,
    workdir_root: host.workdirRoot,
    console_public_base_url: host.consolePublicBaseUrl,
    relay_public_url: host.relayPublicUrl,
    console_router: {
      bind_host: host.consoleBindHost,
      listen_port: host.consoleListenPort,
      route_prefix: host.consoleRoutePrefix,
    },
    relay: { bind_host: host.relayBindHost, listen_port: host.relayListenPort },
    runtime_version: host.runtimeVersion,
    last_heartbeat_at: isoOrNull(host.lastHeartbeatAt),
    relay_token_rotated_at: host.relayTokenRotatedAt.toISOString(),
    readiness: hostReadiness(host, now),
    bundles,
    created_at: host.createdAt.toISOString(),
    limits: { max_concurrent_spawns: host.maxConcurrentSpawns, max_agents: host.maxAgents },
    lost_at: isoOrNull(host.lostAt),
    drain: hostDrain(host),
  };
}

/** A host after its heartbeat: the host, and the tunnel of its environment (null when it is in none). */
export function presentHeartbeatAnswer(
  host: RuntimeHost,
  bundles: string[],
  environment: HostEnvironment | null,
  now: Date,
): Schemas['RuntimeHost'] {
  return {
    ...presentRuntimeHost(host, bundles, now),
    tunnel: environment && presentTunnelSummary(environment.environment, environment.connectorReady),
  };
}

export function presentNetworkHost(view: NetworkHostView, now: Date): Schemas['NetworkHost'] {
  const { host } = view;
  const readiness = hostReadiness(host, now);
  const urls = publicUrlsOf(host, view.environment?.environment);
  return {
    runtime_instance_id: host.id,
    name: host.name,
    workdir_root: host.workdirRoot,
    console_public_base_url: urls.console,
    relay_public_url: urls.relay,
    ...(view.environment && {
      tunnel: presentTunnelSummary(view.environment.environment, view.environment.connectorReady),
    }),
    spawn_ready: readiness.spawn_ready,
    drain: hostDrain(host),
    readiness,
    running_agents: view.runningAgents,
    last_heartbeat_at: isoOrNull(host.lastHeartbeatAt),
    runtime_version: host.runtimeVersion,
    bundles: view.bundles,
    console_activity: view.consoleActivity.map((agent) => ({
      agent_id: agent.id,
      agent_name: agent.name,
      console_last_activity_at: isoOrNull(agent.consoleLastActivityAt),
    })),
  };
}

/** The runtime config; the camelCase groups are the spec's own wire names. */
export function presentRuntimeConfig(
  workspace: Pick<Workspace, 'id' | 'slug'>,
  pulled: PulledRuntimeConfig,
): Schemas['RuntimeConfig'] {
  const { host } = pulled;
  const urls = publicUrlsOf(host, pulled.environment?.environment);
  return {
    runtime_instance_id: host.id,
    workspace: { id: workspace.id, slug: workspace.slug },
    consoleRouter: {
      publicBaseUrl: urls.console,
      bindHost: host.consoleBindHost,
      listenPort: host.consoleListenPort,
      routePrefix: host.consoleRoutePrefix,
    },
    relay: { bindHost: host.relayBindHost, listenPort: host.relayListenPort, publicUrl: urls.relay },
    ...(pulled.environment && {
      tunnel: presentTunnelSummary(pulled.environment.environment, pulled.environment.connectorReady),
    }),
    // Empty when a participant reads: the field keeps the type it was released with (a string).
    auth: { relay_token: pulled.relayToken, workspace_api_key: pulled.workspaceApiKey ?? '' },
    runtime_key: pulled.runtimeKeys && {
      current: {
        id: pulled.runtimeKeys.current.id,
        prefix: pulled.runtimeKeys.current.prefix,
        issued_at: pulled.runtimeKeys.current.issuedAt.toISOString(),
        issued_by: pulled.runtimeKeys.current.issuedBy,
      },
      previous: pulled.runtimeKeys.previous && {
        id: pulled.runtimeKeys.previous.id,
        prefix: pulled.runtimeKeys.previous.prefix,
        valid_until: pulled.runtimeKeys.previous.validUntil.toISOString(),
      },
    },
    agent_workdir_root: host.workdirRoot,
  };
}
