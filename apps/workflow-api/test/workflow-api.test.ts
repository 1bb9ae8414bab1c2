import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { createWorkflowClient } from '@svc/contracts';
import { compareModels, expectedModelsFromPrismaSchema, readDatabaseColumns } from '@svc/db-kit';
import { createLogger, createRedis, redisConnectionOptions, startHttpServer } from '@svc/service-kit';
import type { Redis, RunningServer } from '@svc/service-kit';
import { createTestDatabase, obliterateQueues, testRedisUrl, uniqueQueuePrefix } from '@svc/testing';
import { createWorkflowService, MIGRATIONS_DIR } from '../src/app';
import type { WorkflowService } from '../src/app';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { startWorkerProcess } from '../src/worker';

const REDIS_URL = testRedisUrl();
const logger = createLogger({ name: 'workflow-test', level: 'silent' });
/** This file's own queue key prefix, removed at the end. */
const QUEUE_PREFIX = uniqueQueuePrefix('svcwfapi');

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let redis: Redis;
let server: RunningServer;
let service: WorkflowService;

beforeAll(async () => {
  db = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_workflow' });
  database = createDatabase(db.url, { poolSize: 3 });
  redis = createRedis(REDIS_URL);
  service = createWorkflowService({
    database,
    redis,
    logger,
    publicUrl: 'http://workflow.test',
    // Probes and documents never call the hub.
    hub: { url: 'http://127.0.0.1:1', serviceToken: 'x'.repeat(40) },
    queuePrefix: QUEUE_PREFIX,
    validateResponses: true,
  });
  server = await startHttpServer(service.app, { host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await server.close(500);
  // The service's own queue and subscriber connections.
  await service.close();
  await redis.quit();
  await database.close();
  await obliterateQueues(REDIS_URL, QUEUE_PREFIX, ['probe']);
  await db.drop();
});

describe('workflow-api HTTP', () => {
  test('when Postgres and Redis are up, then /healthz and /readyz answer 200 through the typed client', async () => {
    const client = createWorkflowClient({ baseUrl: server.url });
    expect((await client.GET('/healthz')).data).toEqual({ status: 'ok' });
    const ready = await client.GET('/readyz');
    expect(ready.response.status).toBe(200);
    expect(ready.data).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  test('when /openapi.json is fetched, then it is the public OpenAPI 3.1 document with its server', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      openapi: string;
      servers: unknown;
    };
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: 'http://workflow.test' }]);
  });

  test('when Redis is unreachable, then /readyz is 503 naming redis while /healthz stays 200', async () => {
    const deadRedis = createRedis('redis://127.0.0.1:1', { lazyConnect: true, retryStrategy: () => null });
    deadRedis.on('error', () => undefined);
    const unreachable = createWorkflowService({
      database,
      redis: deadRedis,
      logger,
      publicUrl: 'http://workflow.test',
      hub: { url: 'http://127.0.0.1:1', serviceToken: 'x'.repeat(40) },
    });
    const other = await startHttpServer(unreachable.app, { host: '127.0.0.1', port: 0 });
    try {
      const ready = await fetch(`${other.url}/readyz`);
      expect(ready.status).toBe(503);
      const body = (await ready.json()) as { checks: Record<string, string> };
      expect(body.checks.postgres).toBe('ok');
      expect(body.checks.redis).toMatch(/^failed: /);
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
    } finally {
      await other.close(200);
      await unreachable.close();
      deadRedis.disconnect();
    }
  });

  test('when an unknown route is called, then a JSON 404 problem', async () => {
    const res = await fetch(`${server.url}/api/v1/projects/prj_1/workflow/nothing`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });
});

describe('worker process', () => {
  test('when a queue definition is registered, then its jobs run and the probes answer', async () => {
    const prefix = QUEUE_PREFIX;
    const seen: unknown[] = [];
    const handle = startWorkerProcess({
      database,
      redis,
      redisUrl: REDIS_URL,
      queuePrefix: prefix,
      logger,
      hub: { url: 'http://127.0.0.1:1', serviceToken: 'x'.repeat(40) },
      sweeper: false,
      definitions: [{ queue: 'probe', processor: async (job) => void seen.push(job.data) }],
    });
    const probes = await startHttpServer(handle.app, { host: '127.0.0.1', port: 0 });
    const queue = new Queue('probe', { connection: redisConnectionOptions(REDIS_URL), prefix });
    try {
      await queue.add('x', { n: 1 });
      const worker = handle.workers[0]!.worker;
      await new Promise((resolve) => worker.once('completed', resolve));
      expect(seen).toEqual([{ n: 1 }]);
      expect((await fetch(`${probes.url}/readyz`)).status).toBe(200);
    } finally {
      await handle.close();
      await probes.close(200);
      await queue.close();
    }
  });
});

test('when the migrations are applied, then the tables match the Prisma models exactly', async () => {
  const folder = path.join(__dirname, '..', 'prisma', 'schema');
  const schema = readdirSync(folder)
    .filter((f) => f.endsWith('.prisma'))
    .map((f) => readFileSync(path.join(folder, f), 'utf8'))
    .join('\n');
  expect(compareModels(expectedModelsFromPrismaSchema(schema), await readDatabaseColumns(db.url))).toEqual(
    [],
  );
});
