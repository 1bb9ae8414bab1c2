import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { unwrap } from '@svc/contracts';
import type { HubInternalClient } from '@svc/contracts';
import {
  AppError,
  createLogger,
  createSecretBox,
  newId,
  parseSecretBoxKeys,
  redisConnectionOptions,
} from '@svc/service-kit';
import { testRedisUrl } from '@svc/testing';
import { createWorkflowDeps } from '../src/app';
import type { ProjectRef } from '../src/auth/project-directory';
import type { DeliveryQueue } from '../src/data/delivery.queue';
import { DELIVERY_QUEUE } from '../src/data/delivery.queue';
import type { EngineQueue } from '../src/data/reconcile.queue';
import { createDeliverySubscription } from '../src/use-cases/delivery/create-delivery-subscription';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

const REDIS_URL = testRedisUrl();
/** A loopback endpoint nothing listens on: the app is started with loopback endpoints allowed. */
const HOOK_URL = 'http://127.0.0.1:9/hooks/svc';

const box = createSecretBox(parseSecretBoxKeys(`k1:${randomBytes(32).toString('base64')}`));

let s: WorkflowTestStack;
let manager: string;
let reader: string;
let secondProject: string;
let queue: Queue;
/** Jobs this file caused, removed at the end (the stack then removes its queues under its own prefix). */
const enqueued = new Set<string>();

beforeAll(async () => {
  s = await startWorkflowTestStack({ delivery: { secrets: box, allowLoopbackHttp: true } });
  manager = await s.key(['workflow-delivery:manage']);
  reader = await s.key(['workflows:read', 'workflow-contracts:read']);
  secondProject = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: s.workspace.slug } },
      body: { code: 'SECOND', name: 'Second' },
    }),
  ).id;
  queue = new Queue(DELIVERY_QUEUE, { connection: redisConnectionOptions(REDIS_URL), prefix: s.queuePrefix });
}, 60_000);

afterAll(async () => {
  for (const id of enqueued) await (await queue.getJob(id))?.remove().catch(() => undefined);
  await queue.close();
  await s.close();
});

/** Parsed response JSON; the assertions check its shape. */
type Json = ReturnType<typeof JSON.parse>;

const base = (projectId: string = s.project.id) => `/api/v1/projects/${projectId}/workflow`;

async function call(
  method: string,
  path: string,
  key: string | undefined = manager,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: Json; type: string; text: string }> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      ...(key ? { 'x-api-key': key } : {}),
      ...(body === undefined ? {} : { 'content-type': contentType }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : undefined,
    type: res.headers.get('content-type') ?? '',
    text,
  };
}

async function createSubscription(
  extra: object = {},
  projectId?: string,
): Promise<{ id: string; secret: string; data: Json }> {
  const res = await call('POST', `${base(projectId)}/delivery-subscriptions`, manager, {
    url: HOOK_URL,
    events: ['invocation.completed', 'invocation.failed'],
    ...extra,
  });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
  return { id: res.body.data.subscription_id, secret: res.body.data.signing_secret, data: res.body.data };
}

function eventBody(event: string, invocationId: string, projectId: string): string {
  return JSON.stringify({
    type: event,
    timestamp: new Date().toISOString(),
    data: {
      workspace_id: s.workspace.id,
      project_id: projectId,
      invocation_id: invocationId,
      state: event === 'invocation.failed' ? 'failed' : 'completed',
      attention: 'none',
      attention_reason: null,
      correlation_id: 'order-42',
      artifact: null,
    },
  });
}

/** Inserts a delivery row as the engine would have, with the given status and creation time. */
async function seedDelivery(options: {
  subscriptionId: string;
  status?: 'pending' | 'succeeded' | 'failed' | 'skipped';
  createdAt?: Date;
  event?: string;
  invocationId?: string;
  projectId?: string;
  attempts?: number;
}) {
  const event = options.event ?? 'invocation.completed';
  const invocationId = options.invocationId ?? newId('inv');
  const projectId = options.projectId ?? s.project.id;
  const status = options.status ?? 'failed';
  return s.database.prisma.delivery.create({
    data: {
      id: newId('msg'),
      subscriptionId: options.subscriptionId,
      workspaceId: s.workspace.id,
      projectId,
      invocationId,
      event,
      body: eventBody(event, invocationId, projectId),
      status,
      attempts: options.attempts ?? (status === 'pending' ? 0 : 1),
      nextAttemptAt: status === 'pending' ? new Date() : null,
      lastStatusCode: status === 'failed' ? 500 : status === 'succeeded' ? 200 : null,
      createdAt: options.createdAt ?? new Date(),
      completedAt: status === 'pending' ? null : new Date(),
    },
  });
}

const auditOf = (targetId: string) =>
  s.database.prisma.auditEvent.findMany({ where: { targetId }, orderBy: { createdAt: 'asc' } });

describe('creating a subscription', () => {
  test('when a subscription is created, then the signing secret is answered once and stored only sealed', async () => {
    const res = await call('POST', `${base()}/delivery-subscriptions`, manager, {
      url: HOOK_URL,
      events: ['invocation.completed', 'invocation.artifact_rejected'],
      description: 'orders service',
    });
    expect(res.status).toBe(201);
    const data = res.body.data;
    expect(data).toEqual({
      subscription_id: expect.stringMatching(/^dsub_/),
      project_id: s.project.id,
      url: HOOK_URL,
      events: ['invocation.completed', 'invocation.artifact_rejected'],
      description: 'orders service',
      is_active: true,
      disabled_reason: null,
      secret_rotation_ends_at: null,
      rate_limit_per_second: null,
      ordered: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      signing_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const id: string = data.subscription_id;
    const secret: string = data.signing_secret;

    const got = await call('GET', `${base()}/delivery-subscriptions/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual(
      Object.fromEntries(Object.entries(data).filter(([k]) => k !== 'signing_secret')),
    );
    const list = await call('GET', `${base()}/delivery-subscriptions`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: Json) => x.subscription_id)).toContain(id);
    for (const text of [got.text, list.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain('signing_secret');
      expect(text).not.toContain('sealed');
    }

    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(JSON.stringify(row)).not.toContain(secret.slice('whsec_'.length));
    expect(box.open(row.secretSealed, id)).toBe(secret);
    // Sealed for this subscription only: under another id the secret does not open.
    expect(() => box.open(row.secretSealed, 'dsub_other')).toThrow();

    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toEqual(['delivery_subscription.created']);
    expect(audit[0]!.data).toEqual({
      url_origin: 'http://127.0.0.1:9',
      events: ['invocation.completed', 'invocation.artifact_rejected'],
      rate_limit_per_second: null,
      ordered: false,
    });
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  test('when subscriptions are listed, then the newest comes first and deleted ones are left out', async () => {
    const projectId = (
      unwrap(
        await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: s.workspace.slug } },
          body: { code: 'LISTING', name: 'Listing' },
        }),
      ) as { id: string }
    ).id;
    const first = await createSubscription({}, projectId);
    const second = await createSubscription({}, projectId);
    const third = await createSubscription({}, projectId);
    expect((await call('DELETE', `${base(projectId)}/delivery-subscriptions/${second.id}`)).status).toBe(204);
    const list = await call('GET', `${base(projectId)}/delivery-subscriptions`);
    expect(list.body.data.map((x: Json) => x.subscription_id)).toEqual([third.id, first.id]);
  });

  test.each([
    ['https://10.1.2.3/hook', 'url_resolves_to_forbidden_address'],
    ['https://169.254.169.254/latest/meta-data', 'url_resolves_to_forbidden_address'],
    ['https://[::ffff:192.168.1.1]/hook', 'url_resolves_to_forbidden_address'],
    ['https://metadata.google.internal/hook', 'url_host_not_allowed'],
    ['http://93.184.216.34/hook', 'url_scheme_not_allowed'],
    ['ftp://127.0.0.1/hook', 'url_scheme_not_allowed'],
    ['https://user:hunter2@93.184.216.34/hook', 'url_credentials_not_allowed'],
    ['not a url', 'url_invalid'],
  ])('when the URL is %s, then it is refused with 400 %s and nothing is saved', async (url, code) => {
    const before = await s.database.prisma.deliverySubscription.count();
    const res = await call('POST', `${base()}/delivery-subscriptions`, manager, {
      url,
      events: ['invocation.completed'],
    });
    expect(res.status).toBe(400);
    expect(res.type).toContain('application/problem+json');
    expect(res.body.code).toBe(code);
    expect(typeof res.body.detail).toBe('string');
    expect(res.text).not.toContain('hunter2');
    expect(await s.database.prisma.deliverySubscription.count()).toBe(before);
  });

  test.each([
    ['malformed JSON', '{"url": ', 'application/json', 400],
    ['no events', { url: HOOK_URL }, 'application/json', 400],
    ['an empty event list', { url: HOOK_URL, events: [] }, 'application/json', 400],
    ['an unknown event', { url: HOOK_URL, events: ['invocation.exploded'] }, 'application/json', 400],
    [
      'a repeated event',
      { url: HOOK_URL, events: ['invocation.completed', 'invocation.completed'] },
      'application/json',
      400,
    ],
    [
      'an unknown field',
      { url: HOOK_URL, events: ['invocation.failed'], secret: 'x' },
      'application/json',
      400,
    ],
    ['a non-string URL', { url: 42, events: ['invocation.failed'] }, 'application/json', 400],
    ['a text body', 'url=x', 'text/plain', 415],
  ])('when the body has %s, then it is a problem, never a 500', async (_label, body, type, status) => {
    const res = await call('POST', `${base()}/delivery-subscriptions`, manager, body, type);
    expect(res.status).toBe(status);
    expect(res.type).toContain('application/problem+json');
  });
});

describe('access', () => {
  test('when there is no key, then 401; when the key lacks workflow-delivery:manage, then 403', async () => {
    const paths: [string, string, unknown?][] = [
      ['GET', `${base()}/delivery-subscriptions`],
      ['POST', `${base()}/delivery-subscriptions`, { url: HOOK_URL, events: ['invocation.completed'] }],
      ['GET', `${base()}/delivery-subscriptions/dsub_x`],
      ['PATCH', `${base()}/delivery-subscriptions/dsub_x`, { is_active: false }],
      ['DELETE', `${base()}/delivery-subscriptions/dsub_x`],
      ['POST', `${base()}/delivery-subscriptions/dsub_x/rotate-secret`, {}],
      ['GET', `${base()}/deliveries`],
      [
        'POST',
        `${base()}/deliveries/replay`,
        { since: '2020-01-01T00:00:00Z', until: '2030-01-01T00:00:00Z' },
      ],
      ['GET', `${base()}/deliveries/msg_x`],
      ['POST', `${base()}/deliveries/msg_x/redeliver`],
    ];
    for (const [method, path, body] of paths) {
      const anonymous = await call(method, path, '', body);
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      const scoped = await call(method, path, reader, body);
      expect([method, path, scoped.status]).toEqual([method, path, 403]);
    }
  });

  test("when another workspace's key names this project, then 404", async () => {
    const { id } = await createSubscription();
    const rival = await s.otherProject.key(['workflow-delivery:manage']);
    const res = await call('GET', `${base()}/delivery-subscriptions/${id}`, rival);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('project_not_found');
  });

  test('when a subscription is asked for under another project of the workspace, then 404', async () => {
    const { id } = await createSubscription();
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['PATCH', '', { description: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/rotate-secret', {}],
    ] as const) {
      const res = await call(
        method,
        `${base(secondProject)}/delivery-subscriptions/${id}${suffix}`,
        manager,
        body,
      );
      expect([method, res.status, res.body.code]).toEqual([method, 404, 'delivery_subscription_not_found']);
    }
    const delivery = await seedDelivery({ subscriptionId: id });
    for (const [method, suffix] of [
      ['GET', ''],
      ['POST', '/redeliver'],
    ] as const) {
      const res = await call(method, `${base(secondProject)}/deliveries/${delivery.id}${suffix}`);
      expect([method, res.status, res.body.code]).toEqual([method, 404, 'delivery_not_found']);
    }
  });
});

describe('the save-time guard and configuration', () => {
  const stubDeps = (delivery: Parameters<typeof createWorkflowDeps>[0]['delivery']) =>
    createWorkflowDeps({
      database: s.database,
      logger: createLogger({ name: 'delivery-test', level: 'silent' }),
      hub: {} as HubInternalClient,
      queue: {} as EngineQueue,
      deliveries: {
        enqueue: async () => true,
        held: async () => new Set<string>(),
        promote: async () => undefined,
        close: async () => undefined,
      } as DeliveryQueue,
      delivery,
    });
  const project = (): ProjectRef => ({
    id: s.project.id,
    code: s.project.code,
    name: 'Ops',
    workspace: { id: s.workspace.id, slug: s.workspace.slug },
  });
  const actor = { kind: 'service' as const, service: 'delivery-test' };

  test('when loopback endpoints are not allowed, then loopback URLs are refused at save', async () => {
    const deps = stubDeps({ secrets: box, allowLoopbackHttp: false });
    for (const [url, code] of [
      ['https://127.0.0.1/hook', 'url_resolves_to_forbidden_address'],
      ['https://[::1]:8443/hook', 'url_resolves_to_forbidden_address'],
      ['https://localhost/hook', 'url_host_not_allowed'],
      ['http://127.0.0.1:9/hook', 'url_scheme_not_allowed'],
    ]) {
      const error = await createDeliverySubscription(deps, actor, project(), {
        url: url!,
        events: ['invocation.completed'],
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(AppError);
      expect([url, (error as AppError).status, (error as AppError).code]).toEqual([url, 400, code]);
    }
  });

  test('when no encryption key is configured, then creation answers 503 delivery_not_configured', async () => {
    const deps = stubDeps({ secrets: null, allowLoopbackHttp: true });
    const error = await createDeliverySubscription(deps, actor, project(), {
      url: HOOK_URL,
      events: ['invocation.completed'],
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).status).toBe(503);
    expect((error as AppError).code).toBe('delivery_not_configured');
  });

  test('when events repeat, then they are saved once', async () => {
    const deps = stubDeps({ secrets: box, allowLoopbackHttp: true });
    const { subscription } = await createDeliverySubscription(deps, actor, project(), {
      url: HOOK_URL,
      events: ['invocation.failed', 'invocation.completed', 'invocation.failed'],
    });
    expect(subscription.events).toEqual(['invocation.failed', 'invocation.completed']);
  });
});

describe('changing a subscription', () => {
  test('when the URL, events and description change, then they are saved and audited', async () => {
    const { id } = await createSubscription({ description: 'before' });
    const res = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, {
      url: 'http://127.0.0.1:10/other',
      events: ['invocation.cancelled'],
      description: 'after',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      url: 'http://127.0.0.1:10/other',
      events: ['invocation.cancelled'],
      description: 'after',
      is_active: true,
    });
    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toEqual([
      'delivery_subscription.created',
      'delivery_subscription.updated',
    ]);
    expect(audit[1]!.data).toMatchObject({ fields: ['url', 'events', 'description'] });
  });

  test('when the new URL is not allowed, then 400 and nothing changes', async () => {
    const { id } = await createSubscription();
    const res = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, {
      url: 'https://169.254.169.254/',
      description: 'ignored',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('url_resolves_to_forbidden_address');
    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(row.url).toBe(HOOK_URL);
    expect(row.description).toBeNull();
  });

  test('when a patch is empty or unknown, then 400', async () => {
    const { id } = await createSubscription();
    for (const body of [{}, { secret: 'x' }, { is_active: 'no' }, '[']) {
      const res = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, body);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
    }
  });

  test('when disabled, then the reason is manual and pending deliveries are skipped; when enabled, then the reason and exhaustion count clear', async () => {
    const { id } = await createSubscription();
    const pending = await seedDelivery({ subscriptionId: id, status: 'pending' });
    const failed = await seedDelivery({ subscriptionId: id, status: 'failed' });

    const off = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, { is_active: false });
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({ is_active: false, disabled_reason: 'manual' });
    const rows = await s.database.prisma.delivery.findMany({ where: { subscriptionId: id } });
    expect(rows.find((r) => r.id === pending.id)).toMatchObject({ status: 'skipped', nextAttemptAt: null });
    expect(rows.find((r) => r.id === failed.id)!.status).toBe('failed');

    await s.database.prisma.deliverySubscription.update({
      where: { id },
      data: { consecutiveExhaustions: 4 },
    });
    const on = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, { is_active: true });
    expect(on.status).toBe(200);
    expect(on.body.data).toMatchObject({ is_active: true, disabled_reason: null });
    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(row.consecutiveExhaustions).toBe(0);
    expect((await auditOf(id)).map((a) => a.action)).toEqual([
      'delivery_subscription.created',
      'delivery_subscription.updated',
      'delivery_subscription.updated',
    ]);
  });

  test('when a subscription the sender disabled is enabled, then its reason clears', async () => {
    const { id } = await createSubscription();
    await s.database.prisma.deliverySubscription.update({
      where: { id },
      data: { isActive: false, disabledReason: 'retries_exhausted', consecutiveExhaustions: 5 },
    });
    const got = await call('GET', `${base()}/delivery-subscriptions/${id}`);
    expect(got.body.data).toMatchObject({ is_active: false, disabled_reason: 'retries_exhausted' });
    const on = await call('PATCH', `${base()}/delivery-subscriptions/${id}`, manager, { is_active: true });
    expect(on.body.data).toMatchObject({ is_active: true, disabled_reason: null });
  });
});

describe('deleting a subscription', () => {
  test('when deleted, then it is gone from the API, pending deliveries are skipped and history is kept', async () => {
    const { id } = await createSubscription();
    const pending = await seedDelivery({ subscriptionId: id, status: 'pending' });
    const succeeded = await seedDelivery({ subscriptionId: id, status: 'succeeded' });

    const res = await call('DELETE', `${base()}/delivery-subscriptions/${id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');

    expect((await call('GET', `${base()}/delivery-subscriptions/${id}`)).status).toBe(404);
    const list = await call('GET', `${base()}/delivery-subscriptions`);
    expect(list.body.data.map((x: Json) => x.subscription_id)).not.toContain(id);
    const again = await call('DELETE', `${base()}/delivery-subscriptions/${id}`);
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('delivery_subscription_not_found');
    for (const body of [{ is_active: true }, undefined]) {
      const path = body
        ? `${base()}/delivery-subscriptions/${id}`
        : `${base()}/delivery-subscriptions/${id}/rotate-secret`;
      expect((await call(body ? 'PATCH' : 'POST', path, manager, body)).status).toBe(404);
    }

    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(row.deletedAt).not.toBeNull();
    expect(row.isActive).toBe(false);
    expect((await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: pending.id } })).status).toBe(
      'skipped',
    );
    expect((await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: succeeded.id } })).status).toBe(
      'succeeded',
    );
    // Its deliveries stay inspectable.
    expect((await call('GET', `${base()}/deliveries/${succeeded.id}`)).status).toBe(200);
    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toEqual([
      'delivery_subscription.created',
      'delivery_subscription.deleted',
    ]);
    expect(audit[1]!.data).toEqual({ skipped_deliveries: 1 });
  });
});

describe('rotating the signing secret', () => {
  test('when rotated with a grace period, then the new secret is answered once and the old one keeps signing until it ends', async () => {
    const { id, secret: first } = await createSubscription();
    const before = Date.now();
    const res = await call('POST', `${base()}/delivery-subscriptions/${id}/rotate-secret`, manager, {
      grace_seconds: 3600,
    });
    expect(res.status).toBe(200);
    const second: string = res.body.data.signing_secret;
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const ends = Date.parse(res.body.data.secret_rotation_ends_at);
    expect(ends).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(ends).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);

    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(box.open(row.secretSealed, id)).toBe(second);
    expect(box.open(row.previousSecretSealed!, id)).toBe(first);
    expect(JSON.stringify(row)).not.toContain(second);

    const got = await call('GET', `${base()}/delivery-subscriptions/${id}`);
    expect(got.body.data.secret_rotation_ends_at).toBe(res.body.data.secret_rotation_ends_at);
    expect(got.text).not.toContain(second);
    expect(got.text).not.toContain(first);

    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toContain('delivery_subscription.secret_rotated');
    expect(JSON.stringify(audit)).not.toContain(second);
  });

  test('when rotated without a body, then the grace period is 24 hours', async () => {
    const { id } = await createSubscription();
    const res = await call('POST', `${base()}/delivery-subscriptions/${id}/rotate-secret`);
    expect(res.status).toBe(200);
    const ends = Date.parse(res.body.data.secret_rotation_ends_at);
    expect(Math.abs(ends - (Date.now() + 86_400_000))).toBeLessThan(10_000);
  });

  test('when rotated with no grace, then the old secret stops at once', async () => {
    const { id } = await createSubscription();
    await call('POST', `${base()}/delivery-subscriptions/${id}/rotate-secret`, manager, {
      grace_seconds: 60,
    });
    const res = await call('POST', `${base()}/delivery-subscriptions/${id}/rotate-secret`, manager, {
      grace_seconds: 0,
    });
    expect(res.status).toBe(200);
    expect(res.body.data.secret_rotation_ends_at).toBeNull();
    const row = await s.database.prisma.deliverySubscription.findUniqueOrThrow({ where: { id } });
    expect(row.previousSecretSealed).toBeNull();
    expect(row.previousSecretExpiresAt).toBeNull();
    expect(box.open(row.secretSealed, id)).toBe(res.body.data.signing_secret);
  });

  test('when the grace period is out of range, then 400', async () => {
    const { id } = await createSubscription();
    for (const body of [{ grace_seconds: 604_801 }, { grace_seconds: -1 }, { grace: 5 }]) {
      const res = await call('POST', `${base()}/delivery-subscriptions/${id}/rotate-secret`, manager, body);
      expect(res.status).toBe(400);
    }
  });
});

describe('inspecting deliveries', () => {
  let subA: string;
  let subB: string;
  let projectId: string;
  const seeded: Awaited<ReturnType<typeof seedDelivery>>[] = [];
  const t0 = Date.parse('2026-03-01T10:00:00.000Z');

  beforeAll(async () => {
    projectId = (
      unwrap(
        await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: s.workspace.slug } },
          body: { code: 'INSPECT', name: 'Inspect' },
        }),
      ) as { id: string }
    ).id;
    subA = (await createSubscription({}, projectId)).id;
    subB = (await createSubscription({}, projectId)).id;
    const specs = [
      { subscriptionId: subA, status: 'succeeded', event: 'invocation.completed', minute: 0 },
      { subscriptionId: subA, status: 'failed', event: 'invocation.failed', minute: 1 },
      { subscriptionId: subB, status: 'pending', event: 'invocation.completed', minute: 2 },
      { subscriptionId: subB, status: 'failed', event: 'invocation.completed', minute: 3 },
      // Two deliveries created in the same millisecond: the id breaks the tie.
      { subscriptionId: subA, status: 'skipped', event: 'invocation.cancelled', minute: 4 },
      { subscriptionId: subB, status: 'succeeded', event: 'invocation.cancelled', minute: 4 },
    ] as const;
    for (const spec of specs) {
      seeded.push(
        await seedDelivery({
          subscriptionId: spec.subscriptionId,
          status: spec.status,
          event: spec.event,
          projectId,
          createdAt: new Date(t0 + spec.minute * 60_000),
        }),
      );
    }
    const first = seeded[1]!;
    await s.database.prisma.deliveryAttempt.createMany({
      data: [2, 1].map((attempt) => ({
        id: newId('dat'),
        deliveryId: first.id,
        attempt,
        trigger: attempt === 1 ? 'scheduled' : 'manual',
        startedAt: new Date(t0 + 60_000 + attempt * 1000),
        statusCode: attempt === 1 ? 500 : null,
        latencyMs: 12 * attempt,
        error: attempt === 1 ? null : 'timeout',
        responseSnippet: attempt === 1 ? 'internal error' : '',
      })),
    });
  });

  const newestFirst = () =>
    [...seeded].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));

  test('when listed, then deliveries come newest first with their wire shape', async () => {
    const res = await call('GET', `${base(projectId)}/deliveries`);
    expect(res.status).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    expect(res.body.data.map((d: Json) => d.delivery_id)).toEqual(newestFirst().map((d) => d.id));
    const failed = res.body.data.find((d: Json) => d.delivery_id === seeded[1]!.id);
    expect(failed).toEqual({
      delivery_id: seeded[1]!.id,
      subscription_id: subA,
      invocation_id: seeded[1]!.invocationId,
      event: 'invocation.failed',
      status: 'failed',
      attempts: 1,
      next_attempt_at: null,
      last_status_code: 500,
      failure_reason: null,
      created_at: new Date(t0 + 60_000).toISOString(),
      completed_at: expect.any(String),
    });
  });

  test('when paged with a small limit, then the cursors walk every delivery exactly once', async () => {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=4${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await call('GET', `${base(projectId)}/deliveries${query}`);
      expect(res.status).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(4);
      ids.push(...res.body.data.map((d: Json) => d.delivery_id));
      cursor = res.body.next_cursor;
      pages += 1;
    } while (cursor && pages < 10);
    expect(pages).toBe(2);
    expect(ids).toEqual(newestFirst().map((d) => d.id));

    const twoByTwo: string[] = [];
    cursor = null;
    do {
      const res = await call(
        'GET',
        `${base(projectId)}/deliveries?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      twoByTwo.push(...res.body.data.map((d: Json) => d.delivery_id));
      cursor = res.body.next_cursor;
    } while (cursor && twoByTwo.length < 20);
    expect(twoByTwo).toEqual(newestFirst().map((d) => d.id));
  });

  test('when filtered, then only matching deliveries are listed', async () => {
    const ids = async (query: string) =>
      (await call('GET', `${base(projectId)}/deliveries?${query}`)).body.data.map((d: Json) => d.delivery_id);
    const expected = (predicate: (d: (typeof seeded)[number]) => boolean) =>
      newestFirst()
        .filter(predicate)
        .map((d) => d.id);
    expect(await ids('status=failed')).toEqual(expected((d) => d.status === 'failed'));
    expect(await ids('event=invocation.cancelled')).toEqual(
      expected((d) => d.event === 'invocation.cancelled'),
    );
    expect(await ids(`subscription_id=${subB}`)).toEqual(expected((d) => d.subscriptionId === subB));
    expect(await ids(`invocation_id=${seeded[2]!.invocationId}`)).toEqual([seeded[2]!.id]);
    const since = new Date(t0 + 60_000).toISOString();
    const until = new Date(t0 + 3 * 60_000).toISOString();
    expect(await ids(`since=${since}&until=${until}`)).toEqual(
      expected((d) => d.createdAt.getTime() >= t0 + 60_000 && d.createdAt.getTime() < t0 + 3 * 60_000),
    );
    expect(await ids(`status=failed&subscription_id=${subA}`)).toEqual([seeded[1]!.id]);
  });

  test('when the query is invalid, then 400 problem+json', async () => {
    for (const query of [
      'limit=0',
      'limit=201',
      'status=lost',
      'event=other',
      'since=yesterday',
      'cursor=%21%21',
      `cursor=${Buffer.from('["nope"]').toString('base64url')}`,
      `cursor=${Buffer.from('{').toString('base64url')}`,
    ]) {
      const res = await call('GET', `${base(projectId)}/deliveries?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(res.type).toContain('application/problem+json');
    }
  });

  test('when one delivery is read, then its body and attempts in order are included', async () => {
    const delivery = seeded[1]!;
    const res = await call('GET', `${base(projectId)}/deliveries/${delivery.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data.body).toEqual(JSON.parse(delivery.body));
    expect(res.body.data.attempt_log).toEqual([
      {
        attempt: 1,
        started_at: new Date(t0 + 61_000).toISOString(),
        status_code: 500,
        latency_ms: 12,
        error: null,
        response_snippet: 'internal error',
        retries_stopped: false,
        trigger: 'scheduled',
      },
      {
        attempt: 2,
        started_at: new Date(t0 + 62_000).toISOString(),
        status_code: null,
        latency_ms: 24,
        error: 'timeout',
        response_snippet: '',
        retries_stopped: false,
        trigger: 'manual',
      },
    ]);
    const unknown = await call('GET', `${base(projectId)}/deliveries/msg_unknown`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('delivery_not_found');
  });
});

describe('redelivery', () => {
  test('when a failed delivery is redelivered, then it is pending again and its job is queued', async () => {
    const { id } = await createSubscription();
    const delivery = await seedDelivery({ subscriptionId: id, status: 'failed' });
    const before = Date.now();
    const res = await call('POST', `${base()}/deliveries/${delivery.id}/redeliver`);
    enqueued.add(delivery.id);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      delivery_id: delivery.id,
      status: 'pending',
      completed_at: null,
      attempts: 1,
    });
    expect(Date.parse(res.body.data.next_attempt_at)).toBeGreaterThanOrEqual(before - 1000);

    const row = await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: delivery.id } });
    expect(row.status).toBe('pending');
    expect(row.enqueuedAt).not.toBeNull();
    const job = await queue.getJob(delivery.id);
    expect(job?.data).toEqual({ deliveryId: delivery.id, trigger: 'manual' });

    const audit = await auditOf(delivery.id);
    expect(audit.map((a) => a.action)).toEqual(['delivery.redelivered']);
  });

  test('when the subscription is disabled or deleted, then 409 subscription_disabled', async () => {
    const disabled = await createSubscription();
    const d1 = await seedDelivery({ subscriptionId: disabled.id, status: 'failed' });
    await call('PATCH', `${base()}/delivery-subscriptions/${disabled.id}`, manager, { is_active: false });
    const deleted = await createSubscription();
    const d2 = await seedDelivery({ subscriptionId: deleted.id, status: 'succeeded' });
    await call('DELETE', `${base()}/delivery-subscriptions/${deleted.id}`);
    for (const delivery of [d1, d2]) {
      const res = await call('POST', `${base()}/deliveries/${delivery.id}/redeliver`);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('subscription_disabled');
      const row = await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: delivery.id } });
      expect(row.status).toBe(delivery.status);
    }
    expect((await call('POST', `${base()}/deliveries/msg_unknown/redeliver`)).status).toBe(404);
  });
});

describe('replay', () => {
  test('when replayed, then only failed deliveries in the range of active subscriptions are queued again', async () => {
    const projectId = (
      unwrap(
        await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: s.workspace.slug } },
          body: { code: 'REPLAY', name: 'Replay' },
        }),
      ) as { id: string }
    ).id;
    const active = (await createSubscription({}, projectId)).id;
    const other = (await createSubscription({}, projectId)).id;
    const disabled = (await createSubscription({}, projectId)).id;
    const t0 = Date.parse('2026-04-01T00:00:00.000Z');
    const at = (minutes: number) => new Date(t0 + minutes * 60_000);
    const inRange = [
      await seedDelivery({ subscriptionId: active, projectId, status: 'failed', createdAt: at(0) }),
      await seedDelivery({ subscriptionId: active, projectId, status: 'failed', createdAt: at(30) }),
      await seedDelivery({ subscriptionId: other, projectId, status: 'failed', createdAt: at(59) }),
    ];
    const untouched = [
      // At `until`: outside the half-open range.
      await seedDelivery({ subscriptionId: active, projectId, status: 'failed', createdAt: at(60) }),
      await seedDelivery({ subscriptionId: active, projectId, status: 'failed', createdAt: at(-1) }),
      await seedDelivery({ subscriptionId: active, projectId, status: 'succeeded', createdAt: at(10) }),
      await seedDelivery({ subscriptionId: active, projectId, status: 'skipped', createdAt: at(10) }),
      await seedDelivery({ subscriptionId: disabled, projectId, status: 'failed', createdAt: at(10) }),
    ];
    await call('PATCH', `${base(projectId)}/delivery-subscriptions/${disabled}`, manager, {
      is_active: false,
    });
    const range = { since: at(0).toISOString(), until: at(60).toISOString() };

    const one = await call('POST', `${base(projectId)}/deliveries/replay`, manager, {
      ...range,
      subscription_id: other,
    });
    expect(one.status).toBe(202);
    expect(one.body.data).toEqual({ replayed: 1 });

    const res = await call('POST', `${base(projectId)}/deliveries/replay`, manager, range);
    for (const d of [...inRange, ...untouched]) enqueued.add(d.id);
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ replayed: 2 });

    for (const d of inRange) {
      const row = await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: d.id } });
      expect([d.id, row.status, row.completedAt]).toEqual([d.id, 'pending', null]);
      expect(row.nextAttemptAt).not.toBeNull();
      expect(row.enqueuedAt).not.toBeNull();
      expect((await queue.getJob(d.id))?.data).toEqual({
        deliveryId: d.id,
        trigger: 'replay',
      });
    }
    for (const d of untouched) {
      const row = await s.database.prisma.delivery.findUniqueOrThrow({ where: { id: d.id } });
      expect([d.id, row.status]).toEqual([d.id, d.status]);
      expect(await queue.getJob(d.id)).toBeUndefined();
    }

    const again = await call('POST', `${base(projectId)}/deliveries/replay`, manager, range);
    expect(again.body.data).toEqual({ replayed: 0 });

    const audit = await s.database.prisma.auditEvent.findMany({
      where: { projectId, action: 'delivery.replayed' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((a) => (a.data as { count: number }).count)).toEqual([1, 2, 0]);
  });

  test('when the range or body is invalid, then 400; an unknown subscription is 404', async () => {
    const path = `${base()}/deliveries/replay`;
    const reversed = await call('POST', path, manager, {
      since: '2026-05-02T00:00:00Z',
      until: '2026-05-01T00:00:00Z',
    });
    expect(reversed.status).toBe(400);
    expect(reversed.body.code).toBe('time_range_invalid');
    for (const body of [
      {},
      { until: '2026-05-01T00:00:00Z' },
      { since: '2026-05-01T00:00:00Z', statuses: ['pending'] },
      { since: '2026-05-01T00:00:00Z', statuses: [] },
      { since: 'yesterday', until: '2026-05-01T00:00:00Z' },
      { since: '2026-05-01T00:00:00Z', until: '2026-05-02T00:00:00Z', status: 'failed' },
      '{',
    ]) {
      const res = await call('POST', path, manager, body);
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), 400]);
      expect(res.type).toContain('application/problem+json');
    }
    const unknown = await call('POST', path, manager, {
      since: '2026-05-01T00:00:00Z',
      until: '2026-05-02T00:00:00Z',
      subscription_id: 'dsub_unknown',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('delivery_subscription_not_found');
  });
});
