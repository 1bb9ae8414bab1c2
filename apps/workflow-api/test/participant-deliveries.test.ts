import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecretBox, newId, parseSecretBoxKeys } from '@svc/service-kit';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * Delivery subscriptions managed with the participant token (decision 90): owners and admins create, update,
 * test, rotate and delete subscriptions and replay in bulk; members and viewers read them and are refused
 * every change with 403 `role_forbidden`. The secret is answered once and is in no log line; audit events
 * name the participant. The attempt log keeps the receiver's answer with secrets masked.
 */
let s: WorkflowTestStack;
let receiver: Server;
let receiverUrl: string;
const hits: { headers: IncomingHttpHeaders; body: string }[] = [];
const tokens: Record<'admin' | 'member' | 'viewer', string> = { admin: '', member: '', viewer: '' };
const participantIds: Record<string, string> = {};
const box = createSecretBox(parseSecretBoxKeys(`k1:${randomBytes(32).toString('base64')}`));

async function signedInMember(role: 'admin' | 'member' | 'viewer'): Promise<string> {
  const email = `${role}-${randomBytes(3).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const added = await call(s.hubUrl, 'POST', `/api/v1/workspaces/${s.workspace.slug}/members`, s.adminToken, {
    email,
    role,
    password,
  });
  expect(added.status).toBe(201);
  const login = await fetch(`${s.hubUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return ((await login.json()) as { data: { token: string } }).data.token;
}

async function call(base: string, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { code?: string; data?: unknown };
  return { status: res.status, code: json.code, data: json.data as Record<string, unknown> };
}

const wf = (method: string, path: string, token: string, body?: unknown) =>
  call(s.url, method, path, token, body);

/** The participant id the hub names for a token. */
async function participantOf(token: string): Promise<string> {
  const me = await call(s.hubUrl, 'GET', '/api/v1/me', token);
  return (me.data.participant as { id: string }).id;
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      // A receiver that echoes what it got, with a password of its own: the attempt must not keep them.
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          received: true,
          echoed_signature: req.headers['webhook-signature'],
          password: 'receiver-own-password',
          note: `key ${String(req.headers['x-echo-secret'] ?? '')}`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  s = await startWorkflowTestStack({ delivery: { secrets: box, allowLoopbackHttp: true } });
  tokens.admin = await signedInMember('admin');
  tokens.member = await signedInMember('member');
  tokens.viewer = await signedInMember('viewer');
  participantIds.owner = await participantOf(s.adminToken);
  participantIds.admin = await participantOf(tokens.admin);
}, 90_000);

afterAll(async () => {
  await s?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

const subs = () => `/api/v1/projects/${s.project.id}/workflow/delivery-subscriptions`;

describe('delivery subscriptions with the participant token', () => {
  test('when an owner creates, tests, disables, enables, rotates and deletes, then each answers and the audit names the owner', async () => {
    const created = await wf('POST', subs(), s.adminToken, {
      url: receiverUrl,
      events: ['invocation.completed'],
      description: 'from the page',
    });
    expect(created.status).toBe(201);
    const secret = String(created.data.signing_secret);
    expect(secret).toMatch(/^whsec_/);
    const id = String(created.data.subscription_id);

    // Never again: not in the list, not in the subscription.
    const listed = await wf('GET', subs(), s.adminToken);
    expect(JSON.stringify(listed.data)).not.toContain(secret);
    expect(JSON.stringify((await wf('GET', `${subs()}/${id}`, s.adminToken)).data)).not.toContain(secret);

    const tested = await wf('POST', `${subs()}/${id}/test`, s.adminToken);
    expect(tested).toMatchObject({ status: 200, data: { succeeded: true, status_code: 200 } });
    expect(typeof tested.data.latency_ms).toBe('number');
    const snippet = String(tested.data.response_snippet);
    expect(snippet).toContain('"received":true');
    expect(snippet).toContain('"password":"[REDACTED]"');
    expect(snippet).not.toContain('receiver-own-password');
    expect(hits.at(-1)?.body).toContain('delivery_subscription.test');

    expect(await wf('PATCH', `${subs()}/${id}`, s.adminToken, { is_active: false })).toMatchObject({
      status: 200,
      data: { is_active: false, disabled_reason: 'manual' },
    });
    expect(await wf('PATCH', `${subs()}/${id}`, s.adminToken, { is_active: true })).toMatchObject({
      status: 200,
      data: { is_active: true, disabled_reason: null },
    });

    const rotated = await wf('POST', `${subs()}/${id}/rotate-secret`, s.adminToken, {});
    expect(rotated.status).toBe(200);
    expect(String(rotated.data.signing_secret)).toMatch(/^whsec_/);
    expect(rotated.data.signing_secret).not.toBe(secret);

    const replayed = await wf(
      'POST',
      `/api/v1/projects/${s.project.id}/workflow/deliveries/replay`,
      s.adminToken,
      {
        since: new Date(Date.now() - 3_600_000).toISOString(),
        statuses: ['failed', 'succeeded'],
      },
    );
    expect(replayed).toMatchObject({ status: 202, data: { replayed: 0 } });

    expect((await wf('DELETE', `${subs()}/${id}`, s.adminToken)).status).toBe(204);

    const audit = await s.database.prisma.auditEvent.findMany({
      where: { OR: [{ targetId: id }, { action: 'delivery.replayed' }] },
      orderBy: { createdAt: 'asc' },
    });
    const actions = audit.map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'delivery_subscription.created',
        'delivery_subscription.tested',
        'delivery_subscription.secret_rotated',
        'delivery_subscription.deleted',
      ]),
    );
    for (const event of audit)
      expect(event).toMatchObject({ actorKind: 'participant', actorId: participantIds.owner });
    // The secrets were answered to the browser only: no log line and no audit record holds them.
    const logged = s.logs.join('\n') + JSON.stringify(audit);
    expect(logged).not.toContain(secret);
    expect(logged).not.toContain(String(rotated.data.signing_secret));
  });

  test('when an admin manages a subscription, then it is allowed and audited as the admin', async () => {
    const created = await wf('POST', subs(), tokens.admin, {
      url: receiverUrl,
      events: ['invocation.failed'],
    });
    expect(created.status).toBe(201);
    const id = String(created.data.subscription_id);
    expect((await wf('PATCH', `${subs()}/${id}`, tokens.admin, { description: 'renamed' })).status).toBe(200);
    expect((await wf('POST', `${subs()}/${id}/test`, tokens.admin)).status).toBe(200);
    expect((await wf('DELETE', `${subs()}/${id}`, tokens.admin)).status).toBe(204);
    const audit = await s.database.prisma.auditEvent.findMany({ where: { targetId: id } });
    expect(audit.length).toBeGreaterThanOrEqual(4);
    for (const event of audit)
      expect(event).toMatchObject({ actorKind: 'participant', actorId: participantIds.admin });
  });

  test.each(['member', 'viewer'] as const)(
    'when a %s reads, then the subscriptions are listed; every change is 403 role_forbidden and nothing changes',
    async (role) => {
      const created = await wf('POST', subs(), s.adminToken, {
        url: receiverUrl,
        events: ['invocation.failed'],
      });
      const id = String(created.data.subscription_id);
      const token = tokens[role];
      const listed = await wf('GET', subs(), token);
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.data)).toContain(id);
      expect((await wf('GET', `${subs()}/${id}`, token)).status).toBe(200);

      const refused = { status: 403, code: 'role_forbidden' };
      const hitsBefore = hits.length;
      expect(
        await wf('POST', subs(), token, { url: receiverUrl, events: ['invocation.failed'] }),
      ).toMatchObject(refused);
      expect(await wf('PATCH', `${subs()}/${id}`, token, { is_active: false })).toMatchObject(refused);
      expect(await wf('POST', `${subs()}/${id}/rotate-secret`, token, {})).toMatchObject(refused);
      expect(await wf('POST', `${subs()}/${id}/test`, token)).toMatchObject(refused);
      expect(await wf('DELETE', `${subs()}/${id}`, token)).toMatchObject(refused);
      expect(
        await wf('POST', `/api/v1/projects/${s.project.id}/workflow/deliveries/replay`, token, {
          since: new Date(Date.now() - 60_000).toISOString(),
        }),
      ).toMatchObject(refused);
      expect(hits.length).toBe(hitsBefore);
      const row = await s.database.prisma.deliverySubscription.findUnique({ where: { id } });
      expect(row).toMatchObject({ isActive: true, deletedAt: null });
    },
  );

  test('when another workspace’s key names this project, then 404; an unknown subscription is 404 to an owner', async () => {
    const rivalKey = await s.otherProject.key(['workflow-delivery:manage']);
    const res = await fetch(`${s.url}${subs()}`, { headers: { 'x-api-key': rivalKey } });
    expect(res.status).toBe(404);
    // An unknown subscription of this project is 404 to an owner, not 403.
    expect(await wf('POST', `${subs()}/${newId('dsub')}/test`, s.adminToken)).toMatchObject({
      status: 404,
      code: 'delivery_subscription_not_found',
    });
  });
});

describe('the attempt log', () => {
  test('when a receiver echoes a secret, then the attempt keeps its status, latency and answer with the secret masked', async () => {
    const created = await wf('POST', subs(), s.adminToken, {
      url: receiverUrl,
      events: ['invocation.completed'],
    });
    const id = String(created.data.subscription_id);
    const secret = String(created.data.signing_secret);
    // A delivery row with its attempt as the worker records it, the answer echoing the subscription's secret.
    const deliveryId = newId('msg');
    const invocationId = newId('inv');
    const now = new Date();
    await s.database.prisma.delivery.create({
      data: {
        id: deliveryId,
        workspaceId: s.workspace.id,
        projectId: s.project.id,
        subscriptionId: id,
        invocationId,
        event: 'invocation.completed',
        body: JSON.stringify({
          type: 'invocation.completed',
          timestamp: now.toISOString(),
          data: {
            workspace_id: s.workspace.id,
            project_id: s.project.id,
            invocation_id: invocationId,
            state: 'completed',
            attention: 'none',
            attention_reason: null,
            correlation_id: null,
            artifact: null,
          },
        }),
        status: 'succeeded',
        attempts: 1,
        lastStatusCode: 200,
        createdAt: now,
        completedAt: now,
      },
    });
    await s.database.prisma.deliveryAttempt.create({
      data: {
        id: newId('datt'),
        deliveryId,
        attempt: 1,
        startedAt: now,
        statusCode: 200,
        latencyMs: 42,
        responseSnippet: `{"ok":true,"echo":"${secret}","token":"abc"}`,
        trigger: 'scheduled',
      },
    });
    for (const token of [s.adminToken, tokens.viewer]) {
      const detail = await wf(
        'GET',
        `/api/v1/projects/${s.project.id}/workflow/deliveries/${deliveryId}`,
        token,
      );
      expect(detail.status).toBe(200);
      const [attempt] = detail.data.attempt_log as {
        status_code: number;
        latency_ms: number;
        response_snippet: string;
      }[];
      expect(attempt).toMatchObject({ status_code: 200, latency_ms: 42 });
      expect(attempt!.response_snippet).toBe('{"ok":true,"echo":"whsec_[REDACTED]","token":"[REDACTED]"}');
    }
  });
});
