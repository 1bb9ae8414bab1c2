import { randomBytes } from 'node:crypto';
import { createLogger, createRedis, newId, startHttpServer } from '@svc/service-kit';
import type { Redis, RunningServer } from '@svc/service-kit';
import { createTestDatabase, eventually, testRedisUrl, uniqueQueuePrefix } from '@svc/testing';
import type { TestDatabase } from '@svc/testing';
import { createHubService, MIGRATIONS_DIR } from '../src/app';
import type { HubService } from '../src/app';
import { hashPassword } from '../src/auth/passwords';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { testSettings } from './support/harness';

/**
 * Two hub replicas on one database and the real Redis: a key revoked on one is refused by the other within a
 * second, although the other keeps key rows for 10 s (decision 13), because the revoking replica announces it.
 */
let db: TestDatabase;
let redis: Redis;
const replicas: { hub: HubService; database: Database; server: RunningServer }[] = [];

beforeAll(async () => {
  db = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_hub' });
  redis = createRedis(testRedisUrl(), { name: 'key-revocation-test' });
  const prefix = uniqueQueuePrefix('hubrev');
  const settings = testSettings();
  for (let i = 0; i < 2; i += 1) {
    const database = createDatabase(db.url, { poolSize: 3 });
    const hub = await createHubService({
      database,
      settings,
      logger: createLogger({ name: `hub-${i}`, level: 'silent' }),
      keyRefreshIntervalMs: 0,
      notices: { redis, prefix },
    });
    const server = await startHttpServer(hub.app, { host: '127.0.0.1', port: 0 });
    replicas.push({ hub, database, server });
  }
}, 60_000);

afterAll(async () => {
  for (const r of replicas) {
    await r.server.close(1000);
    r.hub.stop();
    await r.database.close();
  }
  await redis.quit();
  await db.drop();
});

async function call(
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as { data?: Record<string, unknown> }) : {} };
}

test('when a key is revoked on one replica, then another replica that cached it refuses it within 1 s', async () => {
  const [a, b] = replicas as [(typeof replicas)[0], (typeof replicas)[0]];
  const prisma = a.database.prisma;
  const suffix = randomBytes(4).toString('hex');
  const workspace = await prisma.workspace.create({
    data: { id: newId('ws'), slug: `ws-${suffix}`, name: `Workspace ${suffix}` },
  });
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const participant = await prisma.participant.create({
    data: {
      id: newId('prt'),
      email: `owner-${suffix}@example.test`,
      displayName: 'Owner',
      passwordHash: await hashPassword(password),
    },
  });
  await prisma.membership.create({
    data: { workspaceId: workspace.id, participantId: participant.id, role: 'owner' },
  });
  const login = await call(
    a.server.url,
    'POST',
    '/api/v1/auth/login',
    {},
    { email: participant.email, password },
  );
  const owner = { authorization: `Bearer ${login.body.data?.token as string}` };
  const created = await call(a.server.url, 'POST', `/api/v1/workspaces/${workspace.slug}/api-keys`, owner, {
    name: 'replicated',
    preset: 'read-only',
  });
  expect(created.status).toBe(201);
  const key = { 'x-api-key': created.body.data?.key as string };
  // Replica B reads the key once and keeps the row for 10 s.
  expect((await call(b.server.url, 'GET', '/api/v1/workspaces', key)).status).toBe(200);
  expect((await call(b.server.url, 'GET', '/api/v1/workspaces', key)).status).toBe(200);

  const revoked = await call(
    a.server.url,
    'DELETE',
    `/api/v1/workspaces/${workspace.slug}/api-keys/${created.body.data?.id as string}`,
    owner,
  );
  expect(revoked.status).toBe(200);
  const started = Date.now();
  await eventually(
    async () => (await call(b.server.url, 'GET', '/api/v1/workspaces', key)).status === 401,
    1_000,
    'a 401 from the other replica',
    { intervalMs: 25 },
  );
  expect(Date.now() - started).toBeLessThan(1_000);
});
