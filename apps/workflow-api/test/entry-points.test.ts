import { randomBytes } from 'node:crypto';
import path from 'node:path';
import {
  createTestDatabase,
  exitWithin,
  freePort,
  startBuiltEntryPoint,
  testRedisUrl,
  waitUntilLive,
} from '@svc/testing';
import { MIGRATIONS_DIR } from '../src/app';

const appDir = path.resolve(__dirname, '..');
jest.setTimeout(30_000);

let db: Awaited<ReturnType<typeof createTestDatabase>>;
beforeAll(async () => {
  db = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_workflow' });
});
afterAll(() => db.drop());

const env = (extra: Record<string, string>) => ({
  DATABASE_URL: db.url,
  REDIS_URL: testRedisUrl(),
  HUB_SERVICE_TOKEN: `svs_${randomBytes(32).toString('base64url')}`,
  WORKFLOW_QUEUE_PREFIX: `t${randomBytes(3).toString('hex')}`,
  ...extra,
});

describe('workflow-api entry points (dist/)', () => {
  test('when the API starts, then it is ready, and SIGTERM stops it with exit 0', async () => {
    const port = await freePort();
    const api = startBuiltEntryPoint(appDir, 'dist/main.js', env({ WORKFLOW_PORT: String(port) }));
    const url = `http://127.0.0.1:${port}`;
    await waitUntilLive(api, url, { probe: '/readyz' });
    expect(await api.stop()).toBe(0);
    expect(api.stdout()).toContain('"msg":"stopped"');
  });

  test('when the worker starts, then its probes answer, and SIGTERM stops it with exit 0', async () => {
    const port = await freePort();
    const worker = startBuiltEntryPoint(
      appDir,
      'dist/worker-main.js',
      env({ WORKFLOW_WORKER_PORT: String(port) }),
    );
    await waitUntilLive(worker, `http://127.0.0.1:${port}`, { probe: '/readyz' });
    expect(await worker.stop()).toBe(0);
  });

  test('when a setting is invalid, then it exits 1 with one line naming it', async () => {
    const api = startBuiltEntryPoint(appDir, 'dist/main.js', env({ REDIS_URL: 'http://not-redis' }));
    expect(await exitWithin(api, 10_000)).toBe(1);
    const lines = api.stderr().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^workflow-api: invalid configuration: REDIS_URL: /);
  });

  test('when the service token is missing, then it refuses to start', async () => {
    const { HUB_SERVICE_TOKEN: _omit, ...rest } = env({});
    const api = startBuiltEntryPoint(appDir, 'dist/main.js', rest);
    expect(await exitWithin(api, 10_000)).toBe(1);
    expect(api.stderr()).toContain('HUB_SERVICE_TOKEN');
  });
});
