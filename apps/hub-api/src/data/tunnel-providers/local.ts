import type { TunnelHostFacts, TunnelLiveState, TunnelProvider } from './tunnel-provider';

function liveFromHosts(hosts: TunnelHostFacts[], now: Date): TunnelLiveState {
  const ready = hosts.filter((host) => host.ready).length;
  return {
    status: hosts.length > 0 && ready === hosts.length ? 'healthy' : ready > 0 ? 'degraded' : 'inactive',
    connections: [],
    checked_at: now.toISOString(),
  };
}

/**
 * For development and tests without a provider account: the public URLs are the loopback addresses of the
 * console router and the relay. No tunnel, no DNS, no connector; the same state machine as any provider.
 */
export function createLocalTunnelProvider(now: () => Date = () => new Date()): TunnelProvider {
  return {
    name: 'local',
    async provision(input) {
      const { consoleListenPort, relayListenPort } = input.host;
      return {
        tunnelId: null,
        tunnelName: null,
        consoleHostname: '127.0.0.1',
        relayHostname: '127.0.0.1',
        consolePublicBaseUrl: `http://127.0.0.1:${consoleListenPort}`,
        relayPublicBaseUrl: `http://127.0.0.1:${relayListenPort}`,
        dnsRecords: [],
        ingress: null,
        connectorToken: null,
        live: liveFromHosts([input.host], now()),
      };
    },
    async delete() {
      // Nothing exists outside the hub.
    },
    async live({ hosts }) {
      return liveFromHosts(hosts, now());
    },
  };
}
