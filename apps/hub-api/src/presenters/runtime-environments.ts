import type { HubApi } from '@svc/contracts';
import type { EnvironmentWithHosts } from '../data/runtime-environments.lookups';
import type { TunnelDnsRecord, TunnelLiveState } from '../data/tunnel-providers/tunnel-provider';
import type { TunnelIngressRule } from '../domain/tunnel-ingress';
import type { RuntimeEnvironment } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** A runtime environment with its hosts and tunnel: never the connector token. */
export function presentRuntimeEnvironment(
  environment: EnvironmentWithHosts,
  live?: TunnelLiveState,
): Schemas['RuntimeEnvironment'] {
  return {
    id: environment.id,
    workspace_id: environment.workspaceId,
    name: environment.name,
    hosts: environment.hosts.map((membership) => ({
      runtime_instance_id: membership.runtimeInstanceId,
      name: membership.host.name,
      connector_ready: membership.connectorReady,
      connector_checked_at: isoOrNull(membership.connectorCheckedAt),
    })),
    tunnel: {
      provider: environment.tunnelProvider,
      state: environment.tunnelState,
      tunnel_id: environment.tunnelId,
      tunnel_name: environment.tunnelName,
      console_hostname: environment.consoleHostname,
      relay_hostname: environment.relayHostname,
      console_public_base_url: environment.consolePublicBaseUrl,
      relay_public_base_url: environment.relayPublicBaseUrl,
      dns_records: Array.isArray(environment.dnsRecords)
        ? (environment.dnsRecords as unknown as TunnelDnsRecord[])
        : [],
      ingress: Array.isArray(environment.ingress)
        ? (environment.ingress as unknown as TunnelIngressRule[])
        : null,
      last_error:
        environment.lastError && typeof environment.lastError === 'object'
          ? (environment.lastError as Record<string, unknown>)
          : null,
      provisioned_at: isoOrNull(environment.provisionedAt),
      ...(live ? { live } : {}),
    },
    backfilled_from_host_id: environment.backfilledFromHostId,
    created_at: environment.createdAt.toISOString(),
    updated_at: environment.updatedAt.toISOString(),
  };
}

/** The tunnel of a host's environment as runtime config and the Networks view show it (no secrets). */
export function presentTunnelSummary(
  environment: RuntimeEnvironment,
  connectorReady: boolean | null,
): Schemas['RuntimeTunnelSummary'] {
  return {
    runtime_environment: environment.name,
    provider: environment.tunnelProvider,
    state: environment.tunnelState,
    tunnel_id: environment.tunnelId,
    console_hostname: environment.consoleHostname,
    relay_hostname: environment.relayHostname,
    connector_ready: connectorReady,
  };
}
