import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@svc/contracts';
import { Workflow } from '@svc/sdk';
import { eventually, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';

/**
 * One trace across the services, followed through a real run: the hub, the Workflow API and its worker run
 * as built processes with `OTEL_*` pointing at a local OTLP/HTTP receiver (JSON protocol), and the reference
 * agent (which sends no trace context) does the stage. A caller that traces its own work sends one
 * `traceparent` with the invoke and the launch; the spans of every process must hang off it: the server
 * spans by operation id, the hub calls of the requests and of the reconcile job, the job spans continuing
 * the invocation's trace (linking the agent's request that caused the delivery), and the signed delivery
 * POST, whose `traceparent` the receiver sees.
 */
jest.setTimeout(90_000);

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

const SERVER = 2;
const CLIENT = 3;
const CONSUMER = 5;

/** OTLP/JSON ids are hex; accept base64 too (some encoders use it) and normalise to lower-case hex. */
function hexId(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  if (/^[0-9a-fA-F]+$/.test(value) && (value.length === 32 || value.length === 16))
    return value.toLowerCase();
  return Buffer.from(value, 'base64').toString('hex');
}

function attributeValue(value: Record<string, unknown> | undefined): unknown {
  if (!value) return undefined;
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

/** A local OTLP/HTTP trace receiver: collects every span posted to `/v1/traces` as JSON. */
class OtlpReceiver {
  server!: Server;
  url = '';
  readonly spans: ExportedSpan[] = [];
  readonly refused: string[] = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('application/json')) {
          this.refused.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
          res.writeHead(415).end();
          return;
        }
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: {
            resource?: { attributes?: { key: string; value: Record<string, unknown> }[] };
            scopeSpans?: { spans?: Record<string, unknown>[] }[];
          }[];
        };
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = String(
            attributeValue(resourceSpans.resource?.attributes?.find((a) => a.key === 'service.name')?.value),
          );
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              this.spans.push({
                service,
                traceId: hexId(span.traceId),
                spanId: hexId(span.spanId),
                parentSpanId: hexId(span.parentSpanId),
                name: String(span.name),
                kind: Number(span.kind),
                links: ((span.links as { traceId: unknown; spanId: unknown }[]) ?? []).map((l) => ({
                  traceId: hexId(l.traceId),
                  spanId: hexId(l.spanId),
                })),
                attributes: Object.fromEntries(
                  ((span.attributes as { key: string; value: Record<string, unknown> }[]) ?? []).map((a) => [
                    a.key,
                    attributeValue(a.value),
                  ]),
                ),
              });
            }
          }
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

/** The subscriber's endpoint: records the headers of each delivery and answers 204. */
class DeliveryReceiver {
  server!: Server;
  url = '';
  readonly received: IncomingHttpHeaders[] = [];

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.received.push(req.headers);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }
}

const otel = new OtlpReceiver();
const receiver = new DeliveryReceiver();
let s: RunStack;
const traceId = randomBytes(16).toString('hex');
const rootSpanId = randomBytes(8).toString('hex');
const traceparent = `00-${traceId}-${rootSpanId}-01`;
let invocationId: string;

beforeAll(async () => {
  await Promise.all([otel.start(), receiver.start()]);
  const tracingEnv = {
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: otel.url,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  s = await startRunStack({
    hubEnv: tracingEnv,
    env: {
      ...tracingEnv,
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '3000',
    },
  });
  await s.addAgent(['report']);
  unwrap(
    await s.wf.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
      params: { path: { projectId: s.project.id } },
      body: { url: receiver.url, events: ['invocation.completed'] as never },
    }),
  );
  const route = await s.seedRoute({ intent: 'traced report' });

  // The caller's own trace: every request below carries its traceparent.
  const caller = new Workflow({
    baseUrl: s.workflowUrl,
    apiKey: s.apiKey,
    projectId: s.project.id,
    maxRetries: 0,
    defaultHeaders: { traceparent },
  });
  const { invocation } = await caller.invocations.create({ intent: route.intent });
  invocationId = invocation.invocation_id;
  await caller.invocations.launch(invocationId);

  await eventually(() => receiver.received.length > 0, 20_000, 'the delivery');
  // Each process exports its spans in batches every 100 ms: wait until the trace is whole (the named spans
  // are in, and every hub call's server span has arrived from the hub).
  await eventually(
    () => {
      const spans = otel.spans.filter((x) => x.traceId === traceId);
      const names = new Set(spans.map((x) => x.name));
      const expected = [
        'createInvocation',
        'launchInvocation',
        'workflow-reconcile process',
        'workflow-delivery process',
        'POST delivery',
      ];
      if (!expected.every((name) => names.has(name))) return false;
      // The agent's artifact request (a trace of its own) that the delivery job links.
      if (!otel.spans.some((x) => x.name === 'publishInvocationArtifact')) return false;
      const calls = spans.filter((x) => x.kind === CLIENT && x.name.includes(' /internal/'));
      const answered = calls.every((call) => spans.some((x) => x.parentSpanId === call.spanId));
      return calls.length > 0 && answered;
    },
    20_000,
    'the whole trace',
  );
}, 90_000);

afterAll(async () => {
  await s?.close();
  await Promise.all([
    new Promise((resolve) => otel.server?.close(resolve)),
    new Promise((resolve) => receiver.server?.close(resolve)),
  ]);
}, 30_000);

function inTrace(): ExportedSpan[] {
  return otel.spans.filter((x) => x.traceId === traceId);
}

function one(filter: (x: ExportedSpan) => boolean, what: string): ExportedSpan {
  const found = inTrace().filter(filter);
  if (found.length === 0) {
    const seen = inTrace().map((x) => `${x.service}:${x.name}`);
    throw new Error(`no ${what} in the trace (spans: ${seen.join(', ')})`);
  }
  return found[0]!;
}

function childrenOf(parent: ExportedSpan): ExportedSpan[] {
  return inTrace().filter((x) => x.parentSpanId === parent.spanId);
}

describe('one trace from an invoke to its delivery', () => {
  test('the OTLP receiver got JSON from every process and nothing else', () => {
    expect(otel.refused).toEqual([]);
    const services = new Set(otel.spans.map((x) => x.service));
    expect(services).toEqual(new Set(['hub-api', 'workflow-api', 'workflow-worker']));
  });

  test('the invoke and its launch: server spans named by operation id, children of the caller', async () => {
    const created = one(
      (x) => x.service === 'workflow-api' && x.name === 'createInvocation',
      'createInvocation',
    );
    expect(created.kind).toBe(SERVER);
    expect(created.parentSpanId).toBe(rootSpanId);
    expect(created.attributes['http.response.status_code']).toBe(201);
    const launched = one(
      (x) => x.service === 'workflow-api' && x.name === 'launchInvocation',
      'launchInvocation',
    );
    expect(launched.kind).toBe(SERVER);
    expect(launched.parentSpanId).toBe(rootSpanId);
    expect(launched.attributes['http.response.status_code']).toBe(202);
  });

  test('the hub calls of a request: a client span in the Workflow API, the server span in the hub', () => {
    const created = one((x) => x.name === 'createInvocation', 'createInvocation');
    // The API key is introspected at the hub for the invoke (or served from the cache of an earlier call).
    const launched = one((x) => x.name === 'launchInvocation', 'launchInvocation');
    const hubCalls = [...childrenOf(created), ...childrenOf(launched)].filter(
      (x) => x.kind === CLIENT && x.service === 'workflow-api',
    );
    expect(hubCalls.length).toBeGreaterThan(0);
    for (const call of hubCalls) {
      expect(call.name).toMatch(/^(GET|POST) \/internal\/v1\//);
      const served = childrenOf(call);
      expect(served).toHaveLength(1);
      expect(served[0]!.service).toBe('hub-api');
      expect(served[0]!.kind).toBe(SERVER);
      expect(served[0]!.name).toMatch(/^[A-Za-z]+$/);
    }
  });

  test('the launch job continues the launch request, and its hub calls reach the hub', () => {
    const launched = one((x) => x.name === 'launchInvocation', 'launchInvocation');
    // Every reconcile of the invocation continues its trace under the launch; the launch's own one assigns
    // the stage (the one after the agent's completion links the agent's request instead).
    const jobs = inTrace().filter(
      (x) => x.service === 'workflow-worker' && x.name === 'workflow-reconcile process',
    );
    expect(jobs.length).toBeGreaterThanOrEqual(1);
    for (const reconcile of jobs) expect(reconcile.parentSpanId).toBe(launched.spanId);
    const job = jobs.find((x) => childrenOf(x).some((c) => c.name === 'POST /internal/v1/handoffs'));
    if (!job) throw new Error('no reconcile job created the stage handoff');
    expect(job.kind).toBe(CONSUMER);
    expect(job.links).toEqual([]);
    expect(job.attributes['messaging.destination.name']).toBe('workflow-reconcile');
    const calls = childrenOf(job).filter((x) => x.kind === CLIENT);
    const roster = calls.find((x) => x.name === 'GET /internal/v1/projects/{projectId}/roster');
    const handoff = calls.find((x) => x.name === 'POST /internal/v1/handoffs');
    expect(roster).toBeDefined();
    expect(handoff).toBeDefined();
    expect(childrenOf(roster!).map((x) => `${x.service}:${x.name}`)).toEqual(['hub-api:getProjectRoster']);
    expect(childrenOf(handoff!).map((x) => `${x.service}:${x.name}`)).toEqual(['hub-api:createStageHandoff']);
  });

  test('the delivery job continues the invocation, links the agent request, and the POST carries its traceparent', () => {
    const launched = one((x) => x.name === 'launchInvocation', 'launchInvocation');
    // The reference agent sent no trace context: its artifact request is a trace of its own.
    const published = otel.spans.find(
      (x) => x.service === 'workflow-api' && x.name === 'publishInvocationArtifact',
    )!;
    expect(published.traceId).not.toBe(traceId);
    expect(published.parentSpanId).toBe('');
    const job = one(
      (x) => x.service === 'workflow-worker' && x.name === 'workflow-delivery process',
      'the delivery job',
    );
    expect(job.kind).toBe(CONSUMER);
    expect(job.parentSpanId).toBe(launched.spanId);
    expect(job.links).toEqual([{ traceId: published.traceId, spanId: published.spanId }]);
    const post = one((x) => x.name === 'POST delivery', 'the delivery attempt');
    expect(post.kind).toBe(CLIENT);
    expect(post.parentSpanId).toBe(job.spanId);
    expect(post.attributes['http.response.status_code']).toBe(204);
    // What the subscriber received: the attempt's own span as the parent, in the caller's trace.
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.traceparent).toBe(`00-${traceId}-${post.spanId}-01`);
    expect(receiver.received[0]!['webhook-signature']).toBeDefined();
  });

  test('every span of the trace has its parent in the trace, up to the caller', () => {
    const spans = inTrace();
    const ids = new Set(spans.map((x) => x.spanId));
    for (const span of spans) {
      expect([span.name, span.parentSpanId === rootSpanId || ids.has(span.parentSpanId)]).toEqual([
        span.name,
        true,
      ]);
    }
    // Spans of work nobody traced (probes, the sweeper) start traces of their own, never this one.
    expect(spans.every((x) => x.name !== 'workflowWorkerReadiness')).toBe(true);
  });
});
