import { usageError } from './cli-error';

/** The most console routers one runtime runs (`svc runtime up --routers N`). */
export const MAX_CONSOLE_ROUTERS = 8;

/**
 * How many console routers the host runs and where each listens (`--routers N`, `--router-ports a,b,…`, or
 * `SVC_CONSOLE_ROUTERS` / `SVC_CONSOLE_ROUTER_PORTS`; a flag wins over its variable).
 */
export interface RouterReplicas {
  count: number;
  ports: number[];
}

function routerCountOf(raw: string, source: string): number {
  const count = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || count < 1 || count > MAX_CONSOLE_ROUTERS) {
    throw usageError(
      'console_routers_invalid',
      `${source} must be a whole number from 1 to ${MAX_CONSOLE_ROUTERS} (got ${JSON.stringify(raw)})`,
      `pass --routers 2 (or set SVC_CONSOLE_ROUTERS=2)`,
    );
  }
  return count;
}

function routerPortsOf(raw: string, source: string): number[] {
  const parts = raw.split(',').map((p) => p.trim());
  const ports = parts.map(Number);
  if (
    parts.some((p) => !/^\d+$/.test(p)) ||
    ports.some((p) => p < 1 || p > 65_535) ||
    new Set(ports).size !== ports.length ||
    ports.length > MAX_CONSOLE_ROUTERS
  ) {
    throw usageError(
      'console_router_ports_invalid',
      `${source} must be up to ${MAX_CONSOLE_ROUTERS} distinct TCP ports, comma-separated (got ${JSON.stringify(raw)})`,
      'pass e.g. --router-ports 8791,8792',
    );
  }
  return ports;
}

/**
 * Decides the host's console routers. One router (the default) listens on the host's console router port, as
 * the pulled runtime config says. With N > 1 each listens on a port of its own — those of `--router-ports`, else
 * the N ports after the host's console port — and the host's console port is left to the load balancer in front
 * of them (`infra/load-balancer/haproxy.cfg`, backend `console`), which is where the tunnel and the public base
 * URL point.
 */
export function routerReplicas(input: {
  listenPort: number;
  routers?: string | undefined;
  routerPorts?: string | undefined;
  env: { SVC_CONSOLE_ROUTERS?: string | undefined; SVC_CONSOLE_ROUTER_PORTS?: string | undefined };
}): RouterReplicas {
  const countRaw = input.routers ?? (input.env.SVC_CONSOLE_ROUTERS?.trim() || undefined);
  const portsRaw = input.routerPorts ?? (input.env.SVC_CONSOLE_ROUTER_PORTS?.trim() || undefined);
  const countSource = input.routers !== undefined ? '--routers' : 'SVC_CONSOLE_ROUTERS';
  const portsSource = input.routerPorts !== undefined ? '--router-ports' : 'SVC_CONSOLE_ROUTER_PORTS';
  const ports = portsRaw === undefined ? undefined : routerPortsOf(portsRaw, portsSource);
  const count = countRaw === undefined ? (ports?.length ?? 1) : routerCountOf(countRaw, countSource);
  if (ports && ports.length !== count) {
    throw usageError(
      'console_router_ports_invalid',
      `${portsSource} names ${ports.length} port(s) for ${count} console router(s)`,
      'name one port per router, or leave the ports out (then they follow the host console port)',
    );
  }
  if (count === 1) return { count, ports: ports ?? [input.listenPort] };
  const chosen = ports ?? Array.from({ length: count }, (_, i) => input.listenPort + 1 + i);
  if (chosen.includes(input.listenPort) || chosen.some((p) => p > 65_535)) {
    throw usageError(
      'console_router_ports_invalid',
      `with ${count} console routers the host's console port ${input.listenPort} is the load balancer's; the routers need other ports (got ${chosen.join(', ')})`,
      'pass --router-ports with ports other than the host console port',
    );
  }
  return { count, ports: chosen };
}
