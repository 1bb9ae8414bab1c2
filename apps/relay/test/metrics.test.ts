import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, metricValue, parseMetrics, startBuiltEntryPoint, waitUntilReady } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { startFakeHub } from './support/fake-hub';
import type { FakeHub } from './support/fake-hub';

/**
 * `/metrics` of the built relay (`node dist/main.js`) during spawns: one started through a stand-in for svc
 * (a script printing what `svc start --json` prints), one svc refuses, and spawns refused at the token guard
 * and by the allow-list. The spawn counter and the request counters by operation id must say exactly that.
 */
jest.setTimeout(60_000);

const appDir = path.resolve(__dirname, '..');
const RELAY_TOKEN = randomBytes(32).toString('hex');

let dir: string;
let hub: FakeHub;
let relay: NodeProcess;
let url: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relay-metrics-'));
  const svc = path.join(dir, 'svc.js');
  fs.writeFileSync(
    svc,
    `const args = process.argv.slice(2);
const name = args[args.indexOf('--name') + 1];
if (name === 'broken') { console.log(JSON.stringify({ ok: false, error: { code: 'workdir_outside_root', message: 'outside the workdir root', exit_code: 1 } })); process.exit(1); }
console.log(JSON.stringify({ ok: true, result: { agent_id: 'agt_' + name, name, pid: 4242, serve_port: null, runtime_instance_id: 'rti_metrics', console_url: null } }));`,
  );
  hub = await startFakeHub();
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  relay = startBuiltEntryPoint(
    appDir,
    'dist/main.js',
    {
      RELAY_PORT: String(port),
      SVC_HUB_URL: hub.url,
      SVC_WORKSPACE: 'acme',
      SVC_WORKSPACE_API_KEY: `svc_test_${randomBytes(16).toString('hex')}`,
      SVC_RELAY_TOKEN: RELAY_TOKEN,
      SVC_RUNTIME_INSTANCE_ID: 'rti_metrics',
      SVC_RELAY_SVC_ENTRY: svc,
      SVC_RELAY_SPAWN_LOG: path.join(dir, 'spawns.jsonl'),
      LOG_LEVEL: 'warn',
    },
    { name: 'the relay' },
  );
  await waitUntilReady(relay, url);
});

afterAll(async () => {
  await relay?.stop();
  await hub?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function spawn(body: unknown, token: string | null = RELAY_TOKEN): Promise<number> {
  const res = await fetch(`${url}/spawn`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-svc-relay-token': token } : {}) },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

const spawnId = () => `spw_${randomBytes(8).toString('hex')}`;

test('relay /metrics: spawns by outcome and requests by operation id, process metrics', async () => {
  const first = await fetch(`${url}/metrics`);
  expect(first.status).toBe(200);
  const before = parseMetrics(await first.text());
  for (const outcome of ['started', 'refused', 'failed']) {
    expect(metricValue(before, 'svc_relay_spawns_total', { outcome })).toBe(0);
  }

  expect(await spawn({ spawn_id: spawnId(), agent: { name: 'worker-one' } })).toBe(200);
  expect(await spawn({ spawn_id: spawnId(), agent: { name: 'broken' } })).toBeGreaterThanOrEqual(400);
  expect(await spawn({ spawn_id: spawnId(), agent: { name: 'x' } }, null)).toBe(401);
  expect(await spawn({ spawn_id: spawnId(), agent: { name: 'x' } }, `${RELAY_TOKEN}0`)).toBe(403);
  expect(await spawn({ spawn_id: spawnId(), command_key: 'other', agent: { name: 'x' } })).toBe(422);

  const res = await fetch(`${url}/metrics`);
  expect(res.headers.get('content-type')).toContain('text/plain');
  const after = parseMetrics(await res.text());
  expect(metricValue(after, 'svc_relay_spawns_total', { outcome: 'started', service: 'relay' })).toBe(1);
  expect(metricValue(after, 'svc_relay_spawns_total', { outcome: 'refused' })).toBe(3);
  expect(metricValue(after, 'svc_relay_spawns_total', { outcome: 'failed' })).toBe(1);
  // Every spawn request is counted under its operation, the refused ones included.
  expect(metricValue(after, 'svc_http_requests_total', { operation: 'relaySpawn' })).toBe(5);
  expect(metricValue(after, 'svc_http_requests_total', { operation: 'relaySpawn', status: '200' })).toBe(1);
  expect(metricValue(after, 'svc_http_requests_total', { operation: 'relaySpawn', status: '401' })).toBe(1);
  expect(metricValue(after, 'svc_http_requests_total', { operation: 'relaySpawn', status: '403' })).toBe(1);
  expect(
    metricValue(after, 'svc_http_requests_total', { operation: 'relayReadiness', status: '200' }),
  ).toBeGreaterThan(0);
  expect(metricValue(after, 'svc_http_request_duration_seconds_count', { operation: 'relaySpawn' })).toBe(5);
  expect(metricValue(after, 'process_cpu_user_seconds_total', { service: 'relay' })).toBeGreaterThan(0);
  expect(relay.output()).not.toContain(RELAY_TOKEN);
});
