import { readFileSync, readdirSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { DelayedError } from 'bullmq';
import type { Job, Queue } from 'bullmq';
import type { OpenApiDocument } from '@svc/contracts';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { createMetricsRegistry, metricsPortField } from './metrics';
import type { Registry } from './metrics';
import { createQueueMetrics } from './metrics-queue';
import { registerDatabaseMetrics } from './metrics-database';
import { createPool } from '@svc/db-kit';
// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testDatabaseServerUrl } from '../../testing/src/servers';
import { mountOperations } from './operation-router';

const logger = createLogger({ name: 'metrics-test', level: 'silent' });

/** The value of the sample `name` with exactly these labels in a text exposition (labels in any order). */
function sampleOf(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...match[2]!.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    const same =
      Object.keys(found).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => found[k] === v);
    if (same) return Number(match[3]);
  }
  return undefined;
}

const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Metrics test', version: '1' },
  paths: {
    '/things/{thingId}': {
      get: {
        operationId: 'getThing',
        'x-svc-actors': ['anonymous'],
        'x-svc-scopes': [],
        parameters: [{ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

async function listen(registry: Registry, serveRoute: boolean): Promise<{ url: string; close(): void }> {
  const app = createHttpApp({
    logger,
    metrics: { registry, serveRoute },
    configure: (express) =>
      mountOperations(express, {
        document,
        handlers: {
          getThing: ({ params }: { params: { thingId: string } }) =>
            params.thingId === 'boom'
              ? Promise.reject(new Error('boom'))
              : { status: 200 as const, body: { id: params.thingId } },
        } as never,
        logger,
      }),
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}

describe('HTTP metrics', () => {
  test('when operations answer, then requests are counted by operation id and status, never by path', async () => {
    const registry = createMetricsRegistry('kit-test', { processMetrics: false });
    const app = await listen(registry, true);
    try {
      for (const id of ['a1', 'b2', 'c3']) expect((await fetch(`${app.url}/things/${id}`)).status).toBe(200);
      expect((await fetch(`${app.url}/things/boom`)).status).toBe(500);
      expect((await fetch(`${app.url}/nowhere/x1`)).status).toBe(404);
      expect((await fetch(`${app.url}/things/a1`, { method: 'POST' })).status).toBe(405);

      const res = await fetch(`${app.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(registry.contentType);
      const text = await res.text();
      const requests = (operation: string, status: string) =>
        sampleOf(text, 'svc_http_requests_total', { operation, status, service: 'kit-test' });
      expect(requests('getThing', '200')).toBe(3);
      expect(requests('getThing', '500')).toBe(1);
      expect(requests('unmatched', '404')).toBe(1);
      expect(requests('unmatched', '405')).toBe(1);
      expect(text).not.toMatch(/a1|b2|c3|nowhere/);
      const labels = { operation: 'getThing', status: '200', service: 'kit-test' };
      expect(sampleOf(text, 'svc_http_request_duration_seconds_count', labels)).toBe(3);
    } finally {
      app.close();
    }
  });

  test('when the app does not serve the route, then /metrics is an ordinary 404 and scrapes are not counted', async () => {
    const registry = createMetricsRegistry('kit-test', { processMetrics: false });
    const app = await listen(registry, false);
    try {
      const res = await fetch(`${app.url}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'route_not_found' });
    } finally {
      app.close();
    }
  });

  test('process metrics carry the service label', async () => {
    const registry = createMetricsRegistry('kit-process');
    const text = await registry.metrics();
    expect(text).toMatch(/process_cpu_user_seconds_total\{service="kit-process"\} \d/);
    expect(text).toContain('nodejs_eventloop_lag_p99_seconds{service="kit-process"}');
  });
});

describe('metricsPortField', () => {
  test('unset or empty means no separate listener; a port parses; anything else is refused', () => {
    const field = metricsPortField();
    expect(field.parse(undefined)).toBeUndefined();
    expect(field.parse('')).toBeUndefined();
    expect(field.parse('9464')).toBe(9464);
    for (const bad of ['0', 'abc', '70000', '-1']) expect(field.safeParse(bad).success).toBe(false);
  });
});

describe('queue metrics', () => {
  const fakeQueue = (name: string, counts: Record<string, number> | Error) =>
    ({
      name,
      getJobCounts: async () => {
        if (counts instanceof Error) throw counts;
        return counts;
      },
    }) as unknown as Queue;

  test('when processors finish, then durations are recorded by outcome and failures counted', async () => {
    const registry = createMetricsRegistry('kit-queue', { processMetrics: false });
    const metrics = createQueueMetrics(registry, {
      queues: [fakeQueue('work', { waiting: 4, delayed: 2, active: 1, failed: 3 })],
      logger,
    });
    let mode: 'ok' | 'throw' | 'delay' = 'ok';
    const definition = metrics.instrument({
      queue: 'work',
      processor: async () => {
        if (mode === 'throw') throw new Error('nope');
        if (mode === 'delay') throw new DelayedError();
        return 'done';
      },
    });
    const job = {} as Job<unknown, string>;
    await expect(definition.processor(job)).resolves.toBe('done');
    mode = 'throw';
    await expect(definition.processor(job)).rejects.toThrow('nope');
    mode = 'delay';
    await expect(definition.processor(job)).rejects.toBeInstanceOf(DelayedError);

    const text = await registry.metrics();
    const labels = { queue: 'work', service: 'kit-queue' };
    for (const outcome of ['completed', 'failed', 'rescheduled']) {
      expect(sampleOf(text, 'svc_queue_job_duration_seconds_count', { ...labels, outcome })).toBe(1);
    }
    expect(sampleOf(text, 'svc_queue_job_failures_total', labels)).toBe(1);
    expect(sampleOf(text, 'svc_queue_jobs', { ...labels, state: 'waiting' })).toBe(4);
    expect(sampleOf(text, 'svc_queue_jobs', { ...labels, state: 'delayed' })).toBe(2);
    expect(sampleOf(text, 'svc_queue_jobs', { ...labels, state: 'prioritized' })).toBe(0);
  });

  test('when Redis cannot be read, then the depth series are left out and the scrape still answers', async () => {
    const registry = createMetricsRegistry('kit-queue', { processMetrics: false });
    createQueueMetrics(registry, { queues: [fakeQueue('work', new Error('redis down'))], logger });
    const text = await registry.metrics();
    expect(text).not.toContain('svc_queue_jobs{');
    expect(sampleOf(text, 'svc_queue_job_failures_total', { queue: 'work', service: 'kit-queue' })).toBe(0);
  });
});

describe('database metrics', () => {
  test('when statements run on the pool, then the scrape counts them and shows the pool', async () => {
    const pool = createPool(testDatabaseServerUrl(), { max: 2 });
    try {
      const registry = createMetricsRegistry('kit-db', { processMetrics: false });
      registerDatabaseMetrics(registry, pool);
      await pool.query('select 1');
      await pool.query('select 2');
      const text = await registry.metrics();
      expect(sampleOf(text, 'svc_db_statements_total', { service: 'kit-db' })).toBe(2);
      expect(sampleOf(text, 'svc_db_transactions_total', { service: 'kit-db' })).toBe(2);
      expect(sampleOf(text, 'svc_db_pool_connections', { service: 'kit-db', state: 'total' })).toBe(1);
      expect(sampleOf(text, 'svc_db_pool_connections', { service: 'kit-db', state: 'waiting' })).toBe(0);
      await pool.query('select 3');
      expect(sampleOf(await registry.metrics(), 'svc_db_statements_total', { service: 'kit-db' })).toBe(3);
    } finally {
      await pool.end();
    }
  });
});

describe('the Grafana dashboard (infra/grafana)', () => {
  const root = path.resolve(__dirname, '..', '..', '..');
  const dashboard = JSON.parse(readFileSync(path.join(root, 'infra/grafana/svc-overview.json'), 'utf8')) as {
    panels: { type: string; targets?: { expr: string }[] }[];
  };

  /** `name: 'svc_…'` of every metric defined in the services' and the kit's sources. */
  function definedNames(): Set<string> {
    const names = new Set<string>();
    const visit = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== 'generated') visit(full);
        else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
          for (const m of readFileSync(full, 'utf8').matchAll(/name: '(svc_[a-z_]+)'/g)) names.add(m[1]!);
        }
      }
    };
    visit(path.join(root, 'packages/service-kit/src'));
    for (const app of readdirSync(path.join(root, 'apps'))) visit(path.join(root, 'apps', app, 'src'));
    return names;
  }

  test('every series it queries is one the services export', async () => {
    const defined = definedNames();
    const processNames = new Set(
      (await createMetricsRegistry('names').getMetricsAsJSON()).map((metric) => metric.name),
    );
    const exprs = dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(20);
    const queried = new Set(
      exprs.flatMap((expr) => [...expr.matchAll(/\b((?:svc|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1]!)),
    );
    for (const name of queried) {
      const base = name.replace(/_(bucket|count|sum)$/, '');
      const known =
        defined.has(name) || defined.has(base) || processNames.has(name) || processNames.has(base);
      expect({ name, known }).toEqual({ name, known: true });
    }
    for (const name of ['svc_relay_spawns_total', 'svc_workflow_invocations', 'svc_queue_jobs']) {
      expect(queried.has(name)).toBe(true);
    }
  });
});
