import { fail, pass } from './doctor-checks';
import type { DoctorCheck } from './doctor-checks';

/** Where to get `cloudflared` (the connector of Cloudflare tunnels), as one line. */
export const CLOUDFLARED_INSTALL_HINT =
  'install cloudflared (Debian/Ubuntu: add pkg.cloudflare.com and apt-get install cloudflared; macOS: brew install cloudflared; others: https://developers.cloudflare.com/cloudflare-one/connections/connect-networks/downloads/), or set SVC_CLOUDFLARED_BIN to its path';

/**
 * The connector's command line: the token comes from a 0600 file (never argv, never the environment), the
 * metrics server (whose `/ready` says whether the connector holds edge connections) on loopback, no self-update
 * (the package manager or the image owns the binary).
 */
export function connectorArgv(binary: string, metricsPort: number, tokenFile: string): string[] {
  return [
    binary,
    'tunnel',
    '--no-autoupdate',
    '--metrics',
    `127.0.0.1:${metricsPort}`,
    'run',
    '--token-file',
    tokenFile,
  ];
}

/** `cloudflared`'s `/ready`: 200 with `readyConnections` above zero once it holds a connection to the edge. */
export function connectorReady(status: number | null, body: unknown): boolean {
  if (status !== 200) return false;
  const connections = (body as { readyConnections?: unknown } | null)?.readyConnections;
  return typeof connections !== 'number' || connections > 0;
}

/**
 * `svc config doctor`'s connector check, for a host whose runtime environment has a Cloudflare tunnel (it needs
 * `cloudflared`); null for every other host (local or external tunnels, none), which needs nothing.
 */
export function tunnelConnectorCheck(
  provider: string | null | undefined,
  binary: string | null,
): DoctorCheck | null {
  if (provider !== 'cloudflare') return null;
  const id = 'tunnel_connector';
  if (!binary) {
    return fail(
      id,
      "this host's runtime environment has a Cloudflare tunnel but cloudflared is not installed",
      CLOUDFLARED_INSTALL_HINT,
    );
  }
  return pass(id, `cloudflared at ${binary} (svc runtime up runs the connector)`);
}
