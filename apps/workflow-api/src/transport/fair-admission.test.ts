import { Writable } from 'node:stream';
import { createHttpApp, createLogger, createMetricsRegistry, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import type { NextFunction, Request, Response } from 'express';
import { defaultAdmissionSettings } from '../domain/admission-settings';
import type { AdmissionSettings } from '../domain/admission-settings';
import { registerAdmissionMetrics } from '../domain/workflow-metrics';
import { admissionKey, createAdmission, withSlotSetAside } from './fair-admission';
import type { Admission, AdmissionRefusal } from './fair-admission';

/**
 * The admission middleware on a bare app: an `x-test-actor` header stands for a resolved credential, and
 * `/projects/:projectId/slow` answers when the test says so.
 */
async function startApp(settings: Partial<AdmissionSettings>) {
  const registry = createMetricsRegistry('workflow-api-test');
  const refusals: { count?: (reason: AdmissionRefusal) => void } = {};
  const admission: Admission = createAdmission(
    { ...defaultAdmissionSettings(), ...settings },
    { refused: (reason) => refusals.count?.(reason) },
  );
  refusals.count = registerAdmissionMetrics(registry, admission).refused;
  const gates: (() => void)[] = [];
  const actor = (req: Request, _res: Response, next: NextFunction) => {
    const id = req.header('x-test-actor');
    if (id) req.actor = { kind: 'api_key', keyId: id, workspaceId: 'ws', scopes: [], prefix: 'p' };
    next();
  };
  const app = createHttpApp({
    logger: createLogger({
      name: 'test',
      level: 'silent',
      destination: new Writable({ write: (_c, _e, d) => d() }),
    }),
    configure(app) {
      app.get('/projects/:projectId/slow', actor, admission.middleware, (req, res) => {
        gates.push(() => res.json({ project: req.params.projectId }));
      });
      app.get('/projects/:projectId/held', actor, admission.middleware, async (req, res, next) => {
        try {
          await withSlotSetAside(req, () => new Promise<void>((resolve) => gates.push(resolve)));
          res.json({ held: true });
        } catch (error) {
          next(error);
        }
      });
    },
  });
  const server: RunningServer = await startHttpServer(app, { host: '127.0.0.1', port: 0 });
  return { admission, registry, gates, url: server.url, close: () => server.close(100) };
}

async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** The value of a series in an exposition (the registry adds a `service` label). */
function sample(text: string, name: string, reason?: string): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && (reason === undefined || l.includes(`reason="${reason}"`)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const get = (url: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { 'x-test-actor': 'k1', ...init.headers } });

describe('fair admission middleware', () => {
  test('when a request waits longer than the bound, then it is answered 503 overloaded with Retry-After', async () => {
    const app = await startApp({
      maxInFlight: 1,
      maxInFlightPerKey: 1,
      queueTimeoutMs: 100,
      retryAfterSeconds: 2,
    });
    try {
      const first = get(`${app.url}/projects/a/slow`);
      await until(() => app.admission.stats().inFlight === 1);
      const second = await get(`${app.url}/projects/b/slow`);
      expect(second.status).toBe(503);
      expect(second.headers.get('content-type')).toContain('application/problem+json');
      expect(second.headers.get('retry-after')).toBe('2');
      expect(await second.json()).toMatchObject({ status: 503, code: 'overloaded' });
      app.gates.shift()!();
      expect((await first).status).toBe(200);
      expect(app.admission.stats()).toEqual({ inFlight: 0, queued: 0, waitingKeys: 0 });
      const text = await app.registry.metrics();
      expect(sample(text, 'svc_workflow_admission_refused_total', 'queue_timeout')).toBe(1);
      expect(sample(text, 'svc_workflow_admission_in_flight')).toBe(0);
    } finally {
      await app.close();
    }
  });

  test('when the line is full, then a request is refused at once; when its client goes away, it leaves the line', async () => {
    const app = await startApp({
      maxInFlight: 1,
      maxInFlightPerKey: 1,
      maxQueued: 1,
      queueTimeoutMs: 60_000,
    });
    try {
      const first = get(`${app.url}/projects/a/slow`);
      await until(() => app.admission.stats().inFlight === 1);
      const abort = new AbortController();
      const waiting = get(`${app.url}/projects/b/slow`, { signal: abort.signal }).catch((e: Error) => e.name);
      await until(() => app.admission.stats().queued === 1);
      const full = await get(`${app.url}/projects/c/slow`);
      expect(full.status).toBe(503);
      expect(await full.json()).toMatchObject({ code: 'overloaded' });
      abort.abort();
      expect(await waiting).toBe('AbortError');
      await until(() => app.admission.stats().queued === 0);
      app.gates.shift()!();
      expect((await first).status).toBe(200);
      // The one that went away was never started: nothing else waits for a gate.
      await until(() => app.admission.stats().inFlight === 0);
      expect(app.gates).toHaveLength(0);
      const text = await app.registry.metrics();
      expect(sample(text, 'svc_workflow_admission_refused_total', 'queue_full')).toBe(1);
      expect(sample(text, 'svc_workflow_admission_refused_total', 'client_gone')).toBe(1);
    } finally {
      await app.close();
    }
  });

  test('when a held request waits, then its slot serves others, and it takes a turn again after', async () => {
    const app = await startApp({ maxInFlight: 1, maxInFlightPerKey: 1 });
    try {
      const held = get(`${app.url}/projects/a/held`);
      await until(() => app.gates.length === 1);
      expect(app.admission.stats().inFlight).toBe(0);
      const other = get(`${app.url}/projects/b/slow`);
      await until(() => app.gates.length === 2);
      app.gates.shift()!(); // the held request's wait ends while b holds the only slot
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(app.admission.stats()).toMatchObject({ inFlight: 1, queued: 1 });
      app.gates.shift()!();
      expect((await other).status).toBe(200);
      expect(await (await held).json()).toEqual({ held: true });
      expect(app.admission.stats()).toEqual({ inFlight: 0, queued: 0, waitingKeys: 0 });
    } finally {
      await app.close();
    }
  });

  test('keys: the project of the path, an agent itself, the workspace, else the caller; none without a credential', () => {
    const req = (params: Record<string, string>, actor?: Request['actor']) => ({ params, actor }) as Request;
    const agent = {
      kind: 'agent' as const,
      agentId: 'agt_1',
      workspaceId: 'ws',
      runtimeInstanceId: null,
      scopes: [],
    };
    const key = { kind: 'api_key' as const, keyId: 'key_1', workspaceId: 'ws', scopes: [], prefix: 'p' };
    expect(admissionKey(req({ projectId: 'prj_1' }, key))).toBe('project:prj_1');
    expect(admissionKey(req({ stageId: 'stg_1' }, agent))).toBe('agent:agt_1');
    expect(admissionKey(req({ workspaceId: 'ws_1' }, key))).toBe('workspace:ws_1');
    expect(admissionKey(req({}, key))).toBe('api_key:key_1');
    expect(admissionKey(req({ projectId: 'prj_1' }))).toBeUndefined();
  });
});
