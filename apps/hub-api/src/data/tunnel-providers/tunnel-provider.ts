import { AppError } from '@svc/service-kit';
import type { TunnelIngressRule } from '../../domain/tunnel-ingress';

export type TunnelProviderName = 'cloudflare' | 'local';

/** A DNS record the hub created (or found already pointing at its tunnel) for an environment. */
export interface TunnelDnsRecord {
  id: string;
  name: string;
  type: string;
  content: string;
  proxied: boolean;
}

export interface TunnelLiveState {
  status: 'inactive' | 'degraded' | 'healthy' | 'down' | 'deleted';
  connections: Array<{ id: string; colo_name: string | null; opened_at: string | null }>;
  checked_at: string;
}

/** What an environment's hosts look like to a provider: their loopback ports and readiness. */
export interface TunnelHostFacts {
  consoleListenPort: number;
  relayListenPort: number;
  /** Fresh heartbeat and a ready console router. */
  ready: boolean;
}

export interface ProvisionTunnelInput {
  /** Associated data of the sealed connector token, and a stable key for the provider's records. */
  environmentId: string;
  workspaceId: string;
  workspaceSlug: string;
  environmentName: string;
  /** The tunnel id stored from an earlier provisioning, if any. */
  knownTunnelId: string | null;
  /** DNS records stored from an earlier provisioning. */
  knownDnsRecords: TunnelDnsRecord[];
  host: TunnelHostFacts;
}

export interface ProvisionedTunnel {
  tunnelId: string | null;
  tunnelName: string | null;
  consoleHostname: string;
  relayHostname: string;
  consolePublicBaseUrl: string;
  relayPublicBaseUrl: string;
  dnsRecords: TunnelDnsRecord[];
  ingress: TunnelIngressRule[] | null;
  /** The connector token in clear; the caller seals it at once. Null when no connector is needed. */
  connectorToken: string | null;
  live: TunnelLiveState;
}

export interface DeleteTunnelInput {
  /** The stored tunnel id; null after a provisioning that failed before it was stored (found by name then). */
  tunnelId: string | null;
  workspaceId: string;
  workspaceSlug: string;
  environmentName: string;
  dnsRecords: TunnelDnsRecord[];
}

/**
 * Carries an environment's public hostnames to its hosts. Every method is idempotent: provisioning again
 * finds what exists instead of creating twice, deleting what is already gone succeeds.
 */
export interface TunnelProvider {
  readonly name: TunnelProviderName;
  provision(input: ProvisionTunnelInput): Promise<ProvisionedTunnel>;
  delete(input: DeleteTunnelInput): Promise<void>;
  live(input: { tunnelId: string | null; hosts: TunnelHostFacts[] }): Promise<TunnelLiveState>;
}

/** The tunnel providers this hub can use, and the one used when a request names none. */
export interface TunnelProviders {
  defaultProvider: TunnelProviderName;
  get(name: TunnelProviderName): TunnelProvider;
}

/** A provider error as the provider reported it: its HTTP status and its own `{code, message}` list. */
export function tunnelProviderError(
  provider: TunnelProviderName,
  operation: string,
  status: number,
  errors: Array<{ code: number; message: string }>,
): AppError {
  return new AppError({
    status: 502,
    code: 'tunnel_provider_error',
    detail: `The ${provider} API refused to ${operation} (HTTP ${status}${errors[0] ? `, code ${errors[0].code}: ${errors[0].message}` : ''}).`,
    extra: { provider, operation, provider_status: status, provider_errors: errors },
  });
}

export function tunnelProviderUnavailable(provider: TunnelProviderName, operation: string, cause: unknown) {
  return new AppError({
    status: 502,
    code: 'tunnel_provider_unavailable',
    detail: `The ${provider} API did not answer while trying to ${operation}; retry shortly.`,
    extra: { provider, operation },
    cause,
  });
}
