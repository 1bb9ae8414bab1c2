import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Writable } from 'node:stream';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import { createRelayService } from '../src/app';
import { loadRelayConfig } from '../src/env';
import packageJson from '../package.json';
import { startFakeHub } from './support/fake-hub';
import type { FakeHub } from './support/fake-hub';

interface Relay {
  url: string;
  port: number;
  /** Everything the relay logged, as written. */
  logs: () => string;
  close(): Promise<void>;
}

const running: Relay[] = [];

/** Builds the relay from an env-style record and serves it on 127.0.0.1:0. */
async function startRelay(
  env: NodeJS.ProcessEnv,
  options: { hubTimeoutMs?: number; startedAt?: Date } = {},
): Promise<Relay> {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const config = loadRelayConfig({ RELAY_PORT: '0', ...env });
  const logger = createLogger({ name: 'relay', level: 'trace', destination });
  const built = createRelayService({ config, logger, validateResponses: true, ...options });
  const server: RunningServer = await startHttpServer(built.app, {
    host: config.host,
    port: config.port,
    logger,
  });
  const relay = {
    url: server.url,
    port: server.port,
    logs: () => lines.join(''),
    // As the relay's shutdown does: the server, then the spawn events still being reported to the hub.
    close: async () => {
      await server.close(0);
      await built.eventsFlushed();
    },
  };
  running.push(relay);
  return relay;
}

async function get(relay: Relay, path: string, init: RequestInit = {}) {
  const res = await fetch(`${relay.url}${path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    text,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

let hub: FakeHub;

beforeEach(async () => {
  hub = await startFakeHub();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((relay) => relay.close()));
  await hub.close();
});

const workspaceApiKey = () => `key-${randomBytes(24).toString('hex')}`;
const fullEnv = (): NodeJS.ProcessEnv => ({
  SVC_HUB_URL: hub.url,
  SVC_WORKSPACE: 'acme',
  SVC_WORKSPACE_API_KEY: workspaceApiKey(),
  SVC_RELAY_TOKEN: randomBytes(32).toString('hex'),
  SVC_RELAY_SVC_ENTRY: '/opt/svc/bin/run.js',
  SVC_RUNTIME_INSTANCE_ID: 'rti_relaytest',
});
const SPAWN_MISSING = 'failed: spawn disabled: missing SVC_RELAY_TOKEN';

describe('relay readiness', () => {
  test('when hub URL, workspace and API key are missing, then /readyz answers 503 naming each', async () => {
    const relay = await startRelay({});

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect(res.type).toContain('application/json');
    expect(res.body).toEqual({
      status: 'not_ready',
      checks: {
        hub_url: 'failed: missing SVC_HUB_URL',
        workspace: 'failed: missing SVC_WORKSPACE',
        workspace_api_key: 'failed: missing SVC_WORKSPACE_API_KEY',
        spawn: SPAWN_MISSING,
      },
    });
    expect(hub.requests).toEqual([]);
  });

  test('when only the API key is missing, then /readyz answers 503 naming only it and does not call the hub', async () => {
    const relay = await startRelay({ SVC_HUB_URL: hub.url, SVC_WORKSPACE: 'acme' });

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body?.checks).toEqual({
      hub_url: 'ok',
      workspace: 'ok',
      workspace_api_key: 'failed: missing SVC_WORKSPACE_API_KEY',
      spawn: SPAWN_MISSING,
    });
    expect(hub.requests).toEqual([]);
  });

  test('when everything is configured and the hub answers, then /readyz answers 200', async () => {
    const relay = await startRelay(fullEnv());

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ready',
      checks: { hub_url: 'ok', workspace: 'ok', workspace_api_key: 'ok', spawn: 'ok', hub: 'ok' },
    });
    expect(hub.requests).toEqual(['/healthz', '/api/v1/contract']);
  });

  test('when the hub refuses the workspace API key, then /readyz answers 503 saying so', async () => {
    hub.contractStatus = 401;
    const relay = await startRelay(fullEnv());

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect((res.body?.checks as Record<string, string>).hub).toBe(
      'failed: the hub refuses SVC_WORKSPACE_API_KEY (HTTP 401)',
    );
  });

  test('when no relay token is configured, then /readyz answers 503 naming it', async () => {
    const relay = await startRelay({ ...fullEnv(), SVC_RELAY_TOKEN: '' });

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect((res.body?.checks as Record<string, string>).spawn).toBe(SPAWN_MISSING);
  });

  test('when the hub URL has a trailing slash, then the probe still asks for /healthz', async () => {
    const relay = await startRelay({ ...fullEnv(), SVC_HUB_URL: `${hub.url}/` });

    expect((await get(relay, '/readyz')).status).toBe(200);
    expect(hub.requests).toEqual(['/healthz', '/api/v1/contract']);
  });

  test('when the hub is stopped, then /readyz answers 503 with the hub check failed', async () => {
    const relay = await startRelay(fullEnv());
    await hub.close();

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      status: 'not_ready',
      checks: {
        hub_url: 'ok',
        workspace: 'ok',
        workspace_api_key: 'ok',
        spawn: 'ok',
        hub: 'failed: hub unreachable (ECONNREFUSED)',
      },
    });
  });

  test('when the hub answers 500, then /readyz answers 503 with the status', async () => {
    hub.healthStatus = 500;
    const relay = await startRelay(fullEnv());

    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect((res.body?.checks as Record<string, string>).hub).toBe('failed: hub answered HTTP 500');
  });

  test('when the hub does not answer in time, then /readyz answers 503 after the timeout', async () => {
    hub.hang = true;
    const relay = await startRelay(fullEnv(), { hubTimeoutMs: 200 });

    const started = Date.now();
    const res = await get(relay, '/readyz');

    expect(res.status).toBe(503);
    expect((res.body?.checks as Record<string, string>).hub).toBe('failed: hub did not answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  test('when the relay is not ready, then /healthz still answers 200', async () => {
    const relay = await startRelay({});

    const res = await get(relay, '/healthz');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });
});

describe('relay spawn without svc', () => {
  test('when the relay has a token but no svc to run, then it is ready and a spawn answers 503 host_not_spawn_ready naming what is missing', async () => {
    const env: NodeJS.ProcessEnv = { ...fullEnv(), SVC_RELAY_SVC_ENTRY: '' };
    const relay = await startRelay(env);

    expect((await get(relay, '/readyz')).status).toBe(200);
    const res = await get(relay, '/spawn', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-relay-token': env.SVC_RELAY_TOKEN! },
      body: JSON.stringify({ spawn_id: 'spw_nosvc00001', agent: { name: 'nosvc' } }),
    });

    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'host_not_spawn_ready', spawn_id: 'spw_nosvc00001' });
    expect(res.body?.detail).toContain('SVC_RELAY_SVC_ENTRY');
    expect(res.text).not.toContain(env.SVC_RELAY_TOKEN!);
  });
});

describe('relay problem pages', () => {
  test("when a spawn is refused, then its problem type resolves to the relay's page for that code", async () => {
    const relay = await startRelay(fullEnv());
    const refused = await get(relay, '/spawn', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spawn_id: 'spw_pages00001', agent: { name: 'pages' } }),
    });
    expect(refused.body).toMatchObject({
      code: 'relay_token_missing',
      type: '/docs/errors/relay_token_missing',
    });

    const page = await fetch(new URL(refused.body!.type as string, `${relay.url}/spawn`));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('relay_token_missing');
    expect(html).toContain('x-svc-relay-token');
  });
});

describe('relay status', () => {
  test('when /status is asked, then it reports the process facts and the bound port', async () => {
    const startedAt = new Date(Date.now() - 5_000);
    const relay = await startRelay(fullEnv(), { startedAt });

    const res = await get(relay, '/status');

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      pid: process.pid,
      host: '127.0.0.1',
      port: relay.port,
      hostname: os.hostname(),
      runtime_version: packageJson.version,
      node_version: process.versions.node,
      started_at: startedAt.toISOString(),
      uptime_seconds: expect.any(Number),
      ready: true,
      workspace: 'acme',
      runtime_instance_id: 'rti_relaytest',
      spawn_enabled: true,
      spawns: { requested: 0, in_flight: 0, started: 0, failed: 0 },
    });
    expect(relay.port).toBeGreaterThan(0);
    expect(res.body?.uptime_seconds).toBeGreaterThanOrEqual(5);
    expect(res.body?.uptime_seconds).toBeLessThan(60);
  });

  test('when the relay is not configured, then /status says not ready and no workspace', async () => {
    const relay = await startRelay({});

    const res = await get(relay, '/status');

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ready: false, workspace: null });
  });
});

describe('relay edge', () => {
  test('when no route matches, then 404 problem+json', async () => {
    const relay = await startRelay({});

    const res = await get(relay, '/nowhere');

    expect(res.status).toBe(404);
    expect(res.type).toContain('application/problem+json');
    expect(res.body).toMatchObject({ status: 404, code: 'route_not_found' });
    expect(res.body?.request_id).toEqual(expect.any(String));
  });

  test('when a route is called with a method it does not support, then 405 problem+json with Allow', async () => {
    const relay = await startRelay({});

    const res = await fetch(`${relay.url}/status`, { method: 'DELETE' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('relay secrets', () => {
  test('when the relay runs with an API key and relay token, then neither appears in any answer or log line', async () => {
    const apiKey = workspaceApiKey();
    const relayToken = randomBytes(32).toString('hex');
    const relay = await startRelay({
      ...fullEnv(),
      SVC_WORKSPACE_API_KEY: apiKey,
      SVC_RELAY_TOKEN: relayToken,
    });
    const secrets = [apiKey, relayToken];

    const answers: string[] = [];
    for (const path of ['/healthz', '/readyz', '/status', '/nowhere', `/status?api_key=${apiKey}`]) {
      answers.push((await get(relay, path, { headers: { 'x-api-key': apiKey } })).text);
    }
    await hub.close();
    answers.push((await get(relay, '/readyz')).text);
    answers.push((await get(relay, '/status')).text);

    const logs = relay.logs();
    expect(logs).toContain('"path":"/readyz"');
    for (const secret of secrets) {
      expect(logs).not.toContain(secret);
      for (const answer of answers) expect(answer).not.toContain(secret);
    }
  });
});
