import { request as httpRequest } from 'node:http';
import path from 'node:path';
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import type { RuntimeControlApi } from '@svc/contracts';

export type RuntimeControlClient = Client<RuntimeControlApi.paths>;

/** The control socket of a profile's runtime, inside its owner-only state directory. */
export function controlSocketPath(stateDir: string): string {
  return path.join(stateDir, 'control.sock');
}

/**
 * A `fetch` that sends the request over a Unix domain socket (Node's global fetch cannot). Bodies are small
 * JSON documents both ways, so the answer is buffered.
 */
export function unixSocketFetch(socketPath: string, timeoutMs = 30_000) {
  return async (input: Request): Promise<Response> => {
    const url = new URL(input.url);
    const body = input.body ? Buffer.from(await input.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    input.headers.forEach((value, key) => {
      headers[key] = value;
    });
    if (body) headers['content-length'] = String(body.length);
    return new Promise<Response>((resolve, reject) => {
      const req = httpRequest(
        {
          socketPath,
          path: `${url.pathname}${url.search}`,
          method: input.method,
          headers,
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const responseHeaders = new Headers();
            for (const [key, value] of Object.entries(res.headers)) {
              if (typeof value === 'string') responseHeaders.set(key, value);
              else if (Array.isArray(value)) for (const v of value) responseHeaders.append(key, v);
            }
            const status = res.statusCode ?? 500;
            const payload = status === 204 || status === 304 ? null : Buffer.concat(chunks);
            resolve(new Response(payload, { status, headers: responseHeaders }));
          });
        },
      );
      req.on('timeout', () =>
        req.destroy(Object.assign(new Error('runtime control request timed out'), { name: 'TimeoutError' })),
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

/** A typed client of the runtime control API (contract `runtime-control.yaml`) on `socketPath`. */
export function createRuntimeControlClient(socketPath: string, timeoutMs?: number): RuntimeControlClient {
  return createClient<RuntimeControlApi.paths>({
    baseUrl: 'http://localhost',
    fetch: unixSocketFetch(socketPath, timeoutMs),
  });
}
