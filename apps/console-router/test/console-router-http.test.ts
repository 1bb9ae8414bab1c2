import net from 'node:net';
import { Writable } from 'node:stream';
import { createLogger, startHttpServer } from '@svc/service-kit';
import { createConsoleRouterService } from '../src/app';
import { loadConsoleRouterConfig } from '../src/env';
import { FAKE_TABLE_PATH, fakeHubEnv, startFakeHub } from './support/fake-hub';
import type { FakeHub } from './support/fake-hub';

interface Router {
  url: string;
  logs: () => string;
  close(): Promise<void>;
}

const running: Router[] = [];

/** Builds the console router for a hub URL and serves it on 127.0.0.1:0. */
async function startRouter(
  hubUrl: string,
  options: { hubTimeoutMs?: number; env?: Record<string, string> } = {},
): Promise<Router> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const config = loadConsoleRouterConfig({
    ...fakeHubEnv(hubUrl),
    ...options.env,
    CONSOLE_ROUTER_PORT: '0',
  });
  const logger = createLogger({ name: 'console-router', level: 'trace', destination });
  const built = createConsoleRouterService({
    config,
    logger,
    validateResponses: true,
    hubTimeoutMs: options.hubTimeoutMs,
  });
  const server = await startHttpServer(built.app, { host: config.host, port: config.port, logger });
  built.attach(server.server);
  const router = {
    url: server.url,
    logs: () => lines.join(''),
    close: async () => {
      built.close();
      await server.close(0);
    },
  };
  running.push(router);
  return router;
}

async function get(router: Router, path: string) {
  const res = await fetch(`${router.url}${path}`);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

let hub: FakeHub;

beforeEach(async () => {
  hub = await startFakeHub();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((router) => router.close()));
  await hub.close();
});

describe('console router readiness', () => {
  test('when the hub serves its signing keys, then /readyz answers 200', async () => {
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(200);
    expect(res.type).toContain('application/json');
    expect(res.body).toEqual({
      status: 'ready',
      checks: { hub_jwks: 'ok', route_table: 'ok', upstream_secret: 'ok' },
    });
    expect([...hub.requests].sort()).toEqual(['/.well-known/jwks.json', FAKE_TABLE_PATH]);
  });

  test('when the hub URL has a path and a trailing slash, then the JWKS is asked for below it', async () => {
    const router = await startRouter(`${hub.url}/hub/`);

    await get(router, '/readyz');

    expect([...hub.requests].sort()).toEqual(['/hub/.well-known/jwks.json', `/hub${FAKE_TABLE_PATH}`]);
  });

  test('when the hub is stopped, then /readyz answers 503 with hub_jwks failed', async () => {
    const router = await startRouter(hub.url);
    await hub.close();

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'not_ready',
      checks: {
        hub_jwks: 'failed: hub unreachable (ECONNREFUSED)',
        route_table: 'failed: hub unreachable (ECONNREFUSED)',
        upstream_secret: 'ok',
      },
    });
  });

  test('when the hub answers 404, then /readyz answers 503 with the status', async () => {
    hub.jwksStatus = 404;
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toMatchObject({ hub_jwks: 'failed: hub answered HTTP 404', route_table: 'ok' });
  });

  test('when the hub answers 200 without a keys array, then /readyz answers 503', async () => {
    hub.jwksBody = '{"status":"ok"}';
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toMatchObject({ hub_jwks: 'failed: hub JWKS has no keys array' });
  });

  test('when the hub answers 200 with an empty keys array, then /readyz answers 503', async () => {
    hub.jwksBody = '{"keys":[]}';
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toMatchObject({ hub_jwks: 'failed: hub JWKS has no keys' });
  });

  test('when the hub answers 200 with a body that is not JSON, then /readyz answers 503', async () => {
    hub.jwksBody = '<html>hello</html>';
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toMatchObject({ hub_jwks: 'failed: hub answered with invalid JSON' });
  });

  test('when the hub does not answer in time, then /readyz answers 503 after the timeout', async () => {
    hub.hang = true;
    const router = await startRouter(hub.url, { hubTimeoutMs: 200 });

    const started = Date.now();
    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toEqual({
      hub_jwks: 'failed: hub did not answer within 200 ms',
      route_table: 'failed: hub did not answer within 200 ms',
      upstream_secret: 'ok',
    });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  test('when the hub URL carries credentials, then neither readiness nor logs show them', async () => {
    const withCredentials = hub.url.replace('http://', 'http://operator:hub-password-123@');
    const router = await startRouter(withCredentials);
    await hub.close();

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(JSON.stringify(res.body)).not.toContain('hub-password-123');
    expect(router.logs()).not.toContain('hub-password-123');
  });

  test('when the hub is down, then /healthz still answers 200', async () => {
    const router = await startRouter(hub.url);
    await hub.close();

    const res = await get(router, '/healthz');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});

describe('console router readiness: the route table and the host settings', () => {
  test('when the host id, the runtime key and the console secret are missing, then /readyz names each', async () => {
    const router = await startRouter(hub.url, {
      env: { SVC_RUNTIME_INSTANCE_ID: '', SVC_WORKSPACE_API_KEY: '', CONSOLE_ROUTER_UPSTREAM_SECRET: '' },
    });

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toEqual({
      hub_jwks: 'ok',
      route_table: 'failed: SVC_RUNTIME_INSTANCE_ID and SVC_WORKSPACE_API_KEY are not set',
      upstream_secret: 'failed: CONSOLE_ROUTER_UPSTREAM_SECRET is not set',
    });
  });

  test('when the hub refuses the runtime key, then /readyz names the answer', async () => {
    hub.tableStatus = 401;
    hub.tableBody = '{"code":"credential_invalid"}';
    const router = await startRouter(hub.url);

    const res = await get(router, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toMatchObject({
      route_table: 'failed: hub answered HTTP 401 credential_invalid',
    });
  });
});

describe('console router edge', () => {
  test('when the route table has not been loaded yet, then an agent route answers 503 routes_unavailable', async () => {
    hub.tableStatus = 500;
    const router = await startRouter(hub.url);

    const res = await get(router, '/acme/agents/agt_1/global/health');

    expect(res.status).toBe(503);
    expect(res.type).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'routes_unavailable' });
  });

  test('when no route matches, then 404 problem+json', async () => {
    const router = await startRouter(hub.url);
    await get(router, '/readyz');

    const res = await get(router, '/acme/agents/agt_1/global/health');

    expect(res.status).toBe(404);
    expect(res.type).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, code: 'route_not_found' });
  });

  test('when a request to its own operations is malformed or its head too large, then 400 or 431 and the connection closes', async () => {
    const router = await startRouter(hub.url);
    const port = Number(new URL(router.url).port);
    const answerTo = (raw: string) =>
      new Promise<string>((resolve, reject) => {
        let text = '';
        const socket = net.connect(port, '127.0.0.1', () => socket.write(raw));
        socket.on('data', (data) => (text += data.toString('latin1')));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });

    expect(await answerTo('GET /healthz HTTP/1.1\r\nHost x\r\n\r\n')).toMatch(
      /^HTTP\/1.1 400 Bad Request\r\n/,
    );
    expect(await answerTo(`GET /healthz HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toMatch(
      /^HTTP\/1.1 431 Request Header Fields Too Large\r\n/,
    );
  });
});
