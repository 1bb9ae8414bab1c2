/**
 * A real load balancer (HAProxy, from the distribution's packages) in front of replicas on one machine, with
 * the project's configuration `infra/load-balancer/haproxy.cfg`. The replicated stack and the tests use it.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually } from './process';

export const HAPROXY_CONFIG = path.resolve(__dirname, '../../../infra/load-balancer/haproxy.cfg');

/** One service behind the balancer: where it listens and its replicas (`host:port`). */
export interface BalancedService {
  name: string;
  bind: string;
  servers: string[];
}

/**
 * Fills in the template: `{{frontend <name>}}` becomes a frontend bound to the service's address, `{{servers
 * <name>}}` a checked server line per replica and, after them, the same replicas again as unchecked backups
 * (`<name>-<n>-open … backup`): HAProxy uses those only when every checked server is down, so a health check
 * that fails because every replica is busy (not broken) cannot turn a burst into 503s for all (decision 110).
 * A block (lines between blank lines) of a service not given is left out.
 */
export function renderHaproxyConfig(template: string, services: BalancedService[]): string {
  const byName = new Map(services.map((s) => [s.name, s]));
  const blocks = template.split(/\n\s*\n/);
  const kept: string[] = [];
  for (const block of blocks) {
    const named = /\{\{(?:frontend|servers) ([a-z-]+)\}\}/.exec(block);
    if (named && !byName.has(named[1]!)) continue;
    kept.push(
      block
        .replace(/\{\{frontend ([a-z-]+)\}\}/g, (_, name: string) => {
          const service = byName.get(name)!;
          return `frontend ${name}\n    bind ${service.bind}\n    default_backend ${name}`;
        })
        .replace(/\{\{servers ([a-z-]+)\}\}/g, (_, name: string) => {
          const servers = byName.get(name)!.servers;
          return [
            ...servers.map((server, i) => `    server ${name}-${i + 1} ${server} check`),
            ...servers.map((server, i) => `    server ${name}-${i + 1}-open ${server} backup`),
          ].join('\n');
        }),
    );
  }
  return `${kept.join('\n\n')}\n`;
}

export interface RunningLoadBalancer {
  name: 'haproxy';
  /** HAProxy's process id (a supervisor records it, to stop what a killed parent left behind). */
  pid: number | undefined;
  /** Resolves with HAProxy's exit code or signal. */
  exited: Promise<number | string>;
  /** `http://<bind>` of each service, by name. */
  urls: Record<string, string>;
  /** What HAProxy wrote (warnings, servers going down and up). */
  output(): string;
  stop(): Promise<void>;
}

function listening(address: string): Promise<boolean> {
  const [host, port] = [
    address.slice(0, address.lastIndexOf(':')),
    Number(address.slice(address.lastIndexOf(':') + 1)),
  ];
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** Starts HAProxy in the foreground with the rendered configuration; resolves when every frontend listens. */
export async function startLoadBalancer(
  services: BalancedService[],
  options: { binary?: string } = {},
): Promise<RunningLoadBalancer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-lb-'));
  const file = path.join(dir, 'haproxy.cfg');
  await writeFile(file, renderHaproxyConfig(await readFile(HAPROXY_CONFIG, 'utf8'), services));
  const child = spawn(options.binary ?? 'haproxy', ['-db', '-f', file], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-64_000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'exited')),
  );
  const spawnFailed = new Promise<never>((_, reject) =>
    child.once('error', (error) =>
      reject(new Error(`could not start HAProxy (${error.message}); install the haproxy package`)),
    ),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const exitedEarly = exited.then((code) => {
    throw new Error(`HAProxy exited (${code}) at start:\n${output}`);
  });
  // Either may settle long after the start (at stop): only the race below reads them.
  spawnFailed.catch(() => undefined);
  exitedEarly.catch(() => undefined);
  try {
    await Promise.race([
      spawnFailed,
      exitedEarly,
      eventually(
        async () => (await Promise.all(services.map((s) => listening(s.bind)))).every(Boolean),
        10_000,
        'HAProxy listening on every frontend',
      ),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    name: 'haproxy',
    pid: child.pid,
    exited,
    urls: Object.fromEntries(services.map((s) => [s.name, `http://${s.bind}`])),
    output: () => output,
    stop,
  };
}
