import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  createWorkflowDatabase,
  newServiceToken,
  obliterateQueues,
  redisConnectionOptions,
  startWorkflowWorker,
  testRedisUrl,
  uniqueQueuePrefix,
  workflowEnv,
} from '@svc/testing';
import type { NodeProcess, TestDatabase, WorkflowEnv } from '@svc/testing';
import { DELIVERY_QUEUE } from '../src/data/delivery.queue';
import { RECONCILE_QUEUE } from '../src/data/reconcile.queue';

/**
 * The queue dashboard on the built worker's probe listener: behind the operator credential (none → 401, wrong →
 * 403, right → the board), read-only unless configured otherwise, off with a clear answer without a token.
 */
jest.setTimeout(60_000);

const REDIS_URL = testRedisUrl();
const TOKEN = `op_${randomBytes(24).toString('base64url')}`;
const QUEUES = [RECONCILE_QUEUE, DELIVERY_QUEUE];

interface Worker {
  env: WorkflowEnv;
  process: NodeProcess;
  prefix: string;
}

let db: TestDatabase;
let readOnly: Worker;
let writable: Worker;
let disabled: Worker;

async function startWorker(label: string, env: Record<string, string>): Promise<Worker> {
  const prefix = uniqueQueuePrefix(label);
  const wf = await workflowEnv({
    databaseUrl: db.url,
    redisUrl: REDIS_URL,
    queuePrefix: prefix,
    // Nothing here calls the hub: the worker only needs the setting.
    hubUrl: 'http://127.0.0.1:9',
    serviceToken: newServiceToken(),
    logLevel: 'info',
    env,
  });
  return { env: wf, process: await startWorkflowWorker(wf), prefix };
}

beforeAll(async () => {
  db = await createWorkflowDatabase();
  [readOnly, writable, disabled] = await Promise.all([
    startWorker('qdro', { SVC_OPERATOR_TOKEN: TOKEN }),
    startWorker('qdrw', { SVC_OPERATOR_TOKEN: TOKEN, WORKFLOW_QUEUE_DASHBOARD_READ_ONLY: 'false' }),
    startWorker('qdoff', {}),
  ]);
});

afterAll(async () => {
  for (const worker of [readOnly, writable, disabled]) {
    if (!worker) continue;
    await worker.process.stop();
    await obliterateQueues(REDIS_URL, worker.prefix, QUEUES);
  }
  await db?.drop();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const basic = (password: string) => ({
  authorization: `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`,
});

async function call(worker: Worker, path: string, init: RequestInit = {}) {
  const res = await fetch(`${worker.env.workerUrl}${path}`, { redirect: 'manual', ...init });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML or empty
  }
  return { status: res.status, headers: res.headers, text, body: body as Record<string, unknown> };
}

async function isPaused(worker: Worker, name: string): Promise<boolean> {
  const queue = new Queue(name, { connection: redisConnectionOptions(REDIS_URL), prefix: worker.prefix });
  try {
    return await queue.isPaused();
  } finally {
    await queue.close();
  }
}

describe('queue dashboard on the worker probe port', () => {
  it('when no credential is sent, then 401 problem+json with Bearer and Basic challenges', async () => {
    for (const path of ['/queues', '/queues/api/queues']) {
      const res = await call(readOnly, path);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ status: 401, code: 'operator_credential_missing' });
      const challenge = res.headers.get('www-authenticate') ?? '';
      expect(challenge).toMatch(/^Bearer realm=/);
      expect(challenge).toContain('Basic realm=');
    }
  });

  it('when a wrong token is sent (Bearer or Basic), then 403', async () => {
    for (const headers of [bearer(`${TOKEN}x`), bearer('short'), basic(TOKEN.slice(1))]) {
      const res = await call(readOnly, '/queues/api/queues', { headers });
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ status: 403, code: 'operator_credential_invalid' });
    }
  });

  it('when the operator token is sent, then the board and its API answer, showing both queues read-only', async () => {
    const page = await call(readOnly, '/queues', { headers: bearer(TOKEN) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('svc queues');

    const viaBrowser = await call(readOnly, '/queues/api/queues', { headers: basic(TOKEN) });
    expect(viaBrowser.status).toBe(200);
    const api = await call(readOnly, '/queues/api/queues', { headers: bearer(TOKEN) });
    expect(api.status).toBe(200);
    const queues = (api.body as { queues: { name: string; readOnlyMode: boolean }[] }).queues;
    expect(queues.map((q) => q.name).sort()).toEqual([...QUEUES].sort());
    expect(queues.every((q) => q.readOnlyMode)).toBe(true);
  });

  it('when the board is read-only, then a mutating call is refused and changes nothing', async () => {
    const pause = await call(readOnly, `/queues/api/queues/${RECONCILE_QUEUE}/pause`, {
      method: 'PUT',
      headers: bearer(TOKEN),
    });
    expect(pause.status).toBe(405);
    expect(pause.body).toMatchObject({ code: 'queue_dashboard_read_only' });
    expect(pause.headers.get('allow')).toBe('GET, HEAD');
    const retry = await call(readOnly, `/queues/api/queues/${DELIVERY_QUEUE}/retry/failed`, {
      method: 'PUT',
      headers: bearer(TOKEN),
    });
    expect(retry.status).toBe(405);
    expect(await isPaused(readOnly, RECONCILE_QUEUE)).toBe(false);
    // Without the credential the caller learns nothing about the mode.
    const anonymous = await call(readOnly, `/queues/api/queues/${RECONCILE_QUEUE}/pause`, { method: 'PUT' });
    expect(anonymous.status).toBe(401);
  });

  it('when WORKFLOW_QUEUE_DASHBOARD_READ_ONLY=false, then an operator can pause and resume a queue', async () => {
    const api = await call(writable, '/queues/api/queues', { headers: bearer(TOKEN) });
    const queues = (api.body as { queues: { readOnlyMode: boolean }[] }).queues;
    expect(queues.every((q) => !q.readOnlyMode)).toBe(true);

    const pause = await call(writable, `/queues/api/queues/${RECONCILE_QUEUE}/pause`, {
      method: 'PUT',
      headers: bearer(TOKEN),
    });
    expect(pause.status).toBe(200);
    expect(await isPaused(writable, RECONCILE_QUEUE)).toBe(true);
    const resume = await call(writable, `/queues/api/queues/${RECONCILE_QUEUE}/resume`, {
      method: 'PUT',
      headers: bearer(TOKEN),
    });
    expect(resume.status).toBe(200);
    expect(await isPaused(writable, RECONCILE_QUEUE)).toBe(false);
    // The credential still guards a writable board.
    const wrong = await call(writable, `/queues/api/queues/${RECONCILE_QUEUE}/pause`, {
      method: 'PUT',
      headers: bearer(`${TOKEN}x`),
    });
    expect(wrong.status).toBe(403);
  });

  it('when SVC_OPERATOR_TOKEN is not set, then the dashboard is off and says how to turn it on', async () => {
    for (const headers of [{}, bearer(TOKEN)]) {
      const res = await call(disabled, '/queues', { headers });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ status: 404, code: 'queue_dashboard_disabled' });
      expect(String(res.body.detail)).toContain('SVC_OPERATOR_TOKEN');
    }
    expect((await call(disabled, '/readyz')).status).toBe(200);
  });

  it('the operator token never appears in the worker output', () => {
    for (const worker of [readOnly, writable]) {
      expect(worker.process.output()).not.toContain(TOKEN);
      expect(worker.process.output()).toContain('queue dashboard on the probe listener');
    }
    expect(disabled.process.output()).toContain('queue dashboard off: SVC_OPERATOR_TOKEN is not set');
  });
});
