import path from 'node:path';
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import type { RuntimeControlApi } from '@svc/contracts';
import { nodeFetch } from '@svc/service-kit/node-fetch';

export type RuntimeControlClient = Client<RuntimeControlApi.paths>;

/** The control socket of a profile's runtime, inside its owner-only state directory. */
export function controlSocketPath(stateDir: string): string {
  return path.join(stateDir, 'control.sock');
}

/**
 * A `fetch` that sends the request over a Unix domain socket (Node's global fetch cannot); a failure rejects as
 * fetch does, with the system error (`ENOENT`: no socket) as its `cause`.
 */
export function unixSocketFetch(socketPath: string, timeoutMs = 30_000) {
  return nodeFetch({ socketPath, timeoutMs });
}

/** A typed client of the runtime control API (contract `runtime-control.yaml`) on `socketPath`. */
export function createRuntimeControlClient(socketPath: string, timeoutMs?: number): RuntimeControlClient {
  return createClient<RuntimeControlApi.paths>({
    baseUrl: 'http://localhost',
    fetch: unixSocketFetch(socketPath, timeoutMs),
  });
}
