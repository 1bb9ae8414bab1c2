import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { CliError } from '../domain/cli-error';

/** Serve ports live in the registered range (the hub accepts 1024–65535). */
export const MIN_SERVE_PORT = 1024;
export const MAX_SERVE_PORT = 65535;

/** Whether a TCP listener could bind `port` on `host` right now (the answer may change a moment later). */
export function isPortBindable(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** A port the operating system hands out as free on `host`. */
function ephemeralPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Picks a serve port for a new agent: one the host's other agents do not hold at the hub or in the local
 * supervisor (`taken`) and that binds locally now. `preferred` (the agent's previous port) wins when it
 * still qualifies, so a restarted agent keeps its console port.
 */
export async function allocateServePort(
  taken: ReadonlySet<number>,
  preferred?: number | null,
): Promise<number> {
  if (
    preferred !== undefined &&
    preferred !== null &&
    preferred >= MIN_SERVE_PORT &&
    !taken.has(preferred) &&
    (await isPortBindable(preferred))
  ) {
    return preferred;
  }
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = await ephemeralPort('127.0.0.1');
    if (port >= MIN_SERVE_PORT && port <= MAX_SERVE_PORT && !taken.has(port)) return port;
  }
  throw new Error('no free serve port could be found on 127.0.0.1');
}

/** Whether an HTTP listener answers on 127.0.0.1:`port` (any status counts: something is listening). */
export function httpListenerAnswers(port: number, timeoutMs = 2_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/', method: 'GET', timeout: timeoutMs },
      (res) => {
        res.resume();
        resolve(true);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/**
 * The serve port of a start: `requested` (`--serve-port`) when no other agent of the host holds it and it binds
 * here, else an allocated one (the agent's previous port first).
 */
export async function chooseServePort(input: {
  requested: number | undefined;
  taken: ReadonlySet<number>;
  preferred: number | null | undefined;
}): Promise<number> {
  const fix = 'pick another --serve-port, or leave it out to have one allocated';
  if (input.requested === undefined) return allocateServePort(input.taken, input.preferred);
  if (input.taken.has(input.requested)) {
    throw new CliError({
      code: 'serve_port_taken',
      message: `serve port ${input.requested} belongs to another agent of this host (one serve port per agent)`,
      fix,
    });
  }
  if (!(await isPortBindable(input.requested))) {
    throw new CliError({
      code: 'serve_port_in_use',
      message: `serve port ${input.requested} is in use on 127.0.0.1`,
      fix,
    });
  }
  return input.requested;
}
