import { execFileSync } from 'node:child_process';

/**
 * The fleet's network on one machine: a bridge in the root namespace holding the block's first address (where
 * the hub and the Workflow API listen) and one network namespace per runtime host, joined to the bridge by a
 * veth pair, with the next addresses of the block. Every name starts with `svcfl`, so what a killed run left
 * behind is found and removed by the next one. Nothing is routed off the machine: the block has no gateway
 * beyond the bridge and the namespaces have no default route. Needs root (CAP_NET_ADMIN) and iproute2.
 */
export const FLEET_NETWORK = {
  /** The block the harness owns. */
  block: '10.231.0.0/24',
  bridge: 'svcfl0',
  /** The root namespace's address on the bridge: the hub and the Workflow API listen here. */
  gateway: '10.231.0.1',
  prefixLength: 24,
  namespacePrefix: 'svcfl-h',
} as const;

export interface FleetNamespace {
  name: string;
  /** The host's own address in the block. */
  address: string;
  /** Prefix that runs a command inside the namespace (`ip netns exec <name>`). */
  wrap: string[];
}

function ip(args: string[], options: { ignoreFailure?: boolean } = {}): string {
  try {
    return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    if (options.ignoreFailure) return '';
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(`ip ${args.join(' ')} failed${stderr ? `: ${stderr}` : ''}`, { cause: error });
  }
}

/** Whether this process may create namespaces (root with iproute2). */
export function canCreateFleetNetwork(): boolean {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return false;
  try {
    execFileSync('ip', ['netns', 'list'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The fleet's namespaces that exist now (a running fleet's, or a killed run's leftovers). */
export function fleetNamespaces(): string[] {
  return ip(['netns', 'list'], { ignoreFailure: true })
    .split('\n')
    .map((line) => line.trim().split(/\s+/)[0] ?? '')
    .filter((name) => name.startsWith(FLEET_NETWORK.namespacePrefix));
}

/** Links of the fleet in the root namespace (the bridge and the veth ends on it). */
function fleetLinks(): string[] {
  return ip(['-o', 'link', 'show'], { ignoreFailure: true })
    .split('\n')
    .map((line) => /^\d+:\s+([^:@\s]+)/.exec(line)?.[1] ?? '')
    .filter((name) => name.startsWith('svcfl'));
}

/**
 * Removes every namespace and link of the fleet: each process still in a namespace is killed first (SIGKILL),
 * then the namespace (which takes its veth end, and so the pair) and the bridge are deleted.
 */
export function removeFleetNetwork(): void {
  for (const ns of fleetNamespaces()) {
    for (const pid of namespacePids(ns)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    ip(['netns', 'del', ns], { ignoreFailure: true });
  }
  for (const link of fleetLinks()) ip(['link', 'del', link], { ignoreFailure: true });
}

/** The pids of the processes running in a namespace. */
export function namespacePids(ns: string): number[] {
  return ip(['netns', 'pids', ns], { ignoreFailure: true })
    .split('\n')
    .map((line) => Number(line.trim()))
    .filter((pid) => Number.isInteger(pid) && pid > 0);
}

/**
 * Creates the bridge and `count` namespaces (leftovers of an earlier run are removed first). The namespaces are
 * removed again by {@link removeFleetNetwork}, which the fleet calls on close and on the process's exit.
 */
export function createFleetNetwork(count: number): FleetNamespace[] {
  if (count < 1 || count > 200) throw new RangeError('a fleet has 1 to 200 hosts');
  removeFleetNetwork();
  const { bridge, gateway, prefixLength } = FLEET_NETWORK;
  ip(['link', 'add', bridge, 'type', 'bridge']);
  ip(['addr', 'add', `${gateway}/${prefixLength}`, 'dev', bridge]);
  ip(['link', 'set', bridge, 'up']);
  const namespaces: FleetNamespace[] = [];
  for (let i = 1; i <= count; i += 1) {
    const name = `${FLEET_NETWORK.namespacePrefix}${i}`;
    const address = `10.231.0.${10 + i}`;
    const [outer, inner] = [`svcfl${i}r`, `svcfl${i}n`];
    ip(['netns', 'add', name]);
    ip(['link', 'add', outer, 'type', 'veth', 'peer', 'name', inner]);
    ip(['link', 'set', outer, 'master', bridge]);
    ip(['link', 'set', outer, 'up']);
    ip(['link', 'set', inner, 'netns', name]);
    ip(['-n', name, 'addr', 'add', `${address}/${prefixLength}`, 'dev', inner]);
    ip(['-n', name, 'link', 'set', inner, 'up']);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
    namespaces.push({ name, address, wrap: ['ip', 'netns', 'exec', name] });
  }
  return namespaces;
}
