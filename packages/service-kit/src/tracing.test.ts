import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import { createHubInternalClient } from '@svc/contracts';
import { ConfigError } from './env';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { labelOperation } from './metrics';
import {
  SpanKind,
  currentTraceparent,
  inSpan,
  startTracing,
  tracingEnabled,
  tracingMiddleware,
  tracingSettingsFromEnv,
  withTraceparent,
} from './tracing';

const logger = createLogger({ name: 'tracing-test', level: 'silent' });

describe('tracing settings from OTEL_* variables', () => {
  test('off unless OTEL_TRACES_EXPORTER names an exporter', () => {
    expect(tracingSettingsFromEnv({}, 'hub-api')).toEqual({ enabled: false });
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'none' }, 'hub-api')).toEqual({ enabled: false });
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: ' ' }, 'hub-api')).toEqual({ enabled: false });
  });

  test('OTEL_SDK_DISABLED wins over an exporter', () => {
    expect(
      tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, 'hub-api'),
    ).toEqual({ enabled: false });
  });

  test('OTLP over HTTP, protobuf unless JSON is asked for; the service name defaults to the app', () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp' }, 'relay')).toEqual({
      enabled: true,
      serviceName: 'relay',
      exporters: ['otlp'],
      protocol: 'http/protobuf',
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      batch: {},
    });
    expect(
      tracingSettingsFromEnv(
        {
          OTEL_TRACES_EXPORTER: 'otlp,console',
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
          OTEL_SERVICE_NAME: 'relay-eu-1',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
          OTEL_TRACES_SAMPLER_ARG: '0.25',
          OTEL_BSP_SCHEDULE_DELAY: '200',
          OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '64',
        },
        'relay',
      ),
    ).toEqual({
      enabled: true,
      serviceName: 'relay-eu-1',
      exporters: ['otlp', 'console'],
      protocol: 'http/json',
      sampler: { name: 'parentbased_traceidratio', ratio: 0.25 },
      batch: { scheduledDelayMillis: 200, maxExportBatchSize: 64 },
    });
  });

  test('an exporter or protocol this platform cannot use is a configuration error naming the variable', () => {
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'x')).toThrow(ConfigError);
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'x')).toThrow(
      /OTEL_TRACES_EXPORTER/,
    );
    expect(() =>
      tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'x'),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
    expect(() =>
      tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'x'),
    ).toThrow(/OTEL_TRACES_SAMPLER/);
    expect(() =>
      tracingSettingsFromEnv(
        { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' },
        'x',
      ),
    ).toThrow(/OTEL_TRACES_SAMPLER_ARG/);
    expect(() =>
      tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_SCHEDULE_DELAY: 'soon' }, 'x'),
    ).toThrow(/OTEL_BSP_SCHEDULE_DELAY/);
  });
});

interface Exported {
  name: string;
  kind: number;
  traceId: string;
  id: string;
  parentSpanContext?: { spanId: string };
  resource: { attributes: Record<string, unknown> };
}

describe('tracing off (the default)', () => {
  test('nothing is started, mounted or propagated', async () => {
    const handle = startTracing({ serviceName: 'hub-api', env: {} });
    expect(handle.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(tracingMiddleware()).toBeUndefined();
    expect(currentTraceparent()).toBeUndefined();
    expect(withTraceparent({ outboxId: 'obx_1' })).toEqual({ outboxId: 'obx_1' });
    await expect(inSpan('work', {}, async (span) => span)).resolves.toBeUndefined();
    await handle.shutdown();
  });
});

// The OTLP exporters are proven against real processes (apps/workflow-api/test/tracing.e2e.test.ts): they load
// node:http with a dynamic import, which this test runner's sandbox does not allow. Here the console exporter
// shows what the spans are.
describe('tracing on (console exporter)', () => {
  const exported: Exported[] = [];
  let app: Server;
  let appUrl: string;
  let hubCalls: string[];
  let traceId: string;
  let parent: string;
  let jobTraceparent: string | undefined;

  beforeAll(async () => {
    jest.spyOn(console, 'dir').mockImplementation((value: unknown) => {
      exported.push(value as Exported);
    });
    const handle = startTracing({
      serviceName: 'svc-test',
      env: { OTEL_TRACES_EXPORTER: 'console' },
      logger,
    });
    expect(handle.enabled).toBe(true);
    expect(tracingEnabled()).toBe(true);
    hubCalls = [];
    const express = createHttpApp({
      logger,
      configure(a) {
        a.get('/healthz', (_req: Request, res: Response) => void res.json({ ok: true }));
        // A downstream service: records the traceparent each call brought.
        a.get('/internal/v1/projects/:projectId', (req: Request, res: Response) => {
          labelOperation(res, 'getProject');
          hubCalls.push(String(req.headers.traceparent));
          res.status(404).json({ code: 'project_not_found' });
        });
        a.post('/things', async (_req: Request, res: Response) => {
          labelOperation(res, 'createThing');
          const hub = createHubInternalClient({ baseUrl: appUrl, serviceToken: 'x'.repeat(40) });
          await hub.GET('/internal/v1/projects/{projectId}', { params: { path: { projectId: 'p1' } } });
          const job = withTraceparent({ id: 'j1' });
          // What a worker does with the job later: continue the trace it carries.
          await inSpan(
            'things process',
            { kind: SpanKind.CONSUMER, traceparent: job.traceparent },
            () => new Promise((resolve) => setTimeout(resolve, 5)),
          );
          res.status(201).json(job);
        });
      },
    });
    app = await new Promise<Server>((resolve) => {
      const server = express.listen(0, '127.0.0.1', () => resolve(server));
    });
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    traceId = randomBytes(16).toString('hex');
    parent = randomBytes(8).toString('hex');
    const res = await fetch(`${appUrl}/things`, {
      method: 'POST',
      headers: { traceparent: `00-${traceId}-${parent}-01`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(201);
    jobTraceparent = ((await res.json()) as { traceparent?: string }).traceparent;
    await (await fetch(`${appUrl}/healthz`)).arrayBuffer();
    await handle.shutdown();
  });

  afterAll(async () => {
    jest.restoreAllMocks();
    await new Promise((resolve) => app?.close(resolve));
  });

  function named(name: string): Exported {
    const found = exported.find((x) => x.name === name && x.traceId === traceId);
    if (!found) throw new Error(`no span ${name} (${exported.map((x) => x.name).join(', ')})`);
    return found;
  }

  test('server spans by operation id continue the caller; client spans carry traceparent; jobs continue', () => {
    expect(exported.every((x) => x.resource.attributes['service.name'] === 'svc-test')).toBe(true);
    const server = named('createThing');
    expect(server.kind).toBe(SpanKind.SERVER);
    expect(server.parentSpanContext?.spanId).toBe(parent);
    const client = named('GET /internal/v1/projects/{projectId}');
    expect(client.kind).toBe(SpanKind.CLIENT);
    expect(client.parentSpanContext?.spanId).toBe(server.id);
    const downstream = named('getProject');
    expect(downstream.parentSpanContext?.spanId).toBe(client.id);
    expect(hubCalls).toEqual([`00-${traceId}-${client.id}-01`]);
    // The job data carried the request's span; the job's span is its child.
    expect(jobTraceparent).toBe(`00-${traceId}-${server.id}-01`);
    const job = named('things process');
    expect(job.kind).toBe(SpanKind.CONSUMER);
    expect(job.parentSpanContext?.spanId).toBe(server.id);
  });

  test('a probe nobody traced gets no span', () => {
    expect(exported.length).toBeGreaterThanOrEqual(4);
    expect(exported.some((x) => x.name === 'GET')).toBe(false);
  });
});
