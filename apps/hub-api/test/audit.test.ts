import { hubDocument, unwrap } from '@svc/contracts';
import { listOperations, newId } from '@svc/service-kit';
import { createAuditRepository } from '../src/data/audit.repository';
import { decodeAuditCursor, encodeAuditCursor } from '../src/domain/audit-query';
import { createKey, secretOf, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

/** The secret part of `svc_<12-char prefix>_<secret>`. */
const PATH = '/api/v1/workspaces/{workspace}/audit-events';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

/** Loosely typed on purpose: some tests send values the contract refuses. */
type Query = Record<string, string | number | undefined>;

/** Lists as the given credential; returns status, body and problem. */
async function list(credential: { token?: string; apiKey?: string }, workspace: string, query: Query = {}) {
  const res = await t
    .client(credential)
    .GET(PATH, { params: { path: { workspace }, query: query as never } });
  return { status: res.response.status, page: res.data, error: res.error };
}

/** Inserts an event directly, as the repository would, at a chosen time. */
async function insertEvent(
  workspaceId: string | null,
  fields: {
    action: string;
    createdAt?: Date;
    actorKind?: string;
    actorId?: string | null;
    targetType?: string | null;
    targetId?: string | null;
    id?: string;
  },
) {
  const createdAt = fields.createdAt ?? new Date();
  return t.database.prisma.auditEvent.create({
    data: {
      id: fields.id ?? newId('aud', createdAt.getTime()),
      workspaceId,
      actorKind: fields.actorKind ?? 'service',
      actorId: fields.actorId === undefined ? 'internal' : fields.actorId,
      action: fields.action,
      targetType: fields.targetType ?? null,
      targetId: fields.targetId ?? null,
      data: { note: fields.action },
      createdAt,
    },
  });
}

/** Every event id of a workspace through the API, following cursors. */
async function allPages(owner: SeededMember, query: Query, limit: number) {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page += 1) {
    const res = await list({ token: owner.token }, owner.workspace.slug, {
      ...query,
      limit,
      ...(cursor ? { cursor } : {}),
    });
    expect(res.status).toBe(200);
    ids.push(...(res.page?.data ?? []).map((e) => e.id));
    if (!res.page?.next_cursor) return ids;
    cursor = res.page.next_cursor;
  }
  throw new Error('pagination did not end');
}

describe('audit log: who may read it', () => {
  test('when an owner or an admin lists, then 200; a member or viewer gets 403 role_forbidden', async () => {
    const owner = await t.seedMember('owner');
    const admin = await t.seedMember('admin', owner.workspace);
    const member = await t.seedMember('member', owner.workspace);
    const viewer = await t.seedMember('viewer', owner.workspace);
    expect((await list({ token: owner.token }, owner.workspace.slug)).status).toBe(200);
    expect((await list({ token: admin.token }, owner.workspace.id)).status).toBe(200);
    for (const who of [member, viewer]) {
      const res = await list({ token: who.token }, owner.workspace.slug);
      expect({ status: res.status, code: res.error?.code }).toEqual({ status: 403, code: 'role_forbidden' });
    }
  });

  test('when an API key with audit:read lists, then 200; without it 403 scope_missing; an agent gets 403', async () => {
    const owner = await t.seedMember('owner');
    const reader = await createKey(t, owner, { scopes: ['audit:read'] });
    const other = await createKey(t, owner, { scopes: ['workspaces:read', 'projects:read'] });
    expect((await list({ apiKey: reader.key }, owner.workspace.slug)).status).toBe(200);
    const lacking = await list({ apiKey: other.key }, owner.workspace.slug);
    expect({ status: lacking.status, code: lacking.error?.code }).toEqual({
      status: 403,
      code: 'scope_missing',
    });
    const agent = await t.seedAgent(owner.workspace.id);
    const asAgent = await list({ token: agent.token }, owner.workspace.slug);
    expect({ status: asAgent.status, code: asAgent.error?.code }).toEqual({
      status: 403,
      code: 'actor_not_allowed',
    });
  });
});

describe('audit log: contents and order', () => {
  test('when keys and projects are created and a key revoked, then the events are listed newest first with actor, target and request id', async () => {
    const owner = await t.seedMember('owner');
    const api = t.client({ token: owner.token });
    const created = await createKey(t, owner, { name: 'ci', preset: 'read-only' });
    const project = unwrap(
      await api.POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace: owner.workspace.slug } },
        body: { code: 'AUD', name: 'Audited' },
        headers: { 'x-request-id': 'req-audit-test-1' },
      }),
    );
    await api.DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
      params: { path: { workspace: owner.workspace.slug, keyId: created.id } },
    });

    const res = await list({ token: owner.token }, owner.workspace.slug);
    expect(res.status).toBe(200);
    const events = res.page?.data ?? [];
    expect(events.map((e) => e.action)).toEqual(['api_key.revoked', 'project.created', 'api_key.created']);
    expect(res.page?.next_cursor).toBeNull();
    const [revoked, projectCreated, keyCreated] = events;
    expect(revoked).toMatchObject({
      actor: { kind: 'participant', id: owner.participantId },
      target: { type: 'api_key', id: created.id },
      data: { prefix: created.prefix },
    });
    expect(projectCreated).toMatchObject({
      target: { type: 'project', id: project.id },
      request_id: 'req-audit-test-1',
    });
    expect(keyCreated?.data).toMatchObject({ name: 'ci', preset: 'read-only' });
    for (const event of events) {
      expect(event.id).toMatch(/^aud_/);
      expect(new Date(event.created_at).toISOString()).toBe(event.created_at);
    }
  });

  test('when an event names no target, then target is null', async () => {
    const owner = await t.seedMember('owner');
    await insertEvent(owner.workspace.id, { action: 'workspace.settings_viewed' });
    const res = await list({ token: owner.token }, owner.workspace.slug);
    expect(res.page?.data).toEqual([
      expect.objectContaining({ action: 'workspace.settings_viewed', target: null, request_id: null }),
    ]);
  });
});

describe('audit log: filters', () => {
  let owner: SeededMember;
  const base = Date.parse('2026-03-01T12:00:00.000Z');
  const at = (minutes: number) => new Date(base + minutes * 60_000);

  beforeAll(async () => {
    owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    await insertEvent(ws, {
      action: 'credential.runtime.issued',
      createdAt: at(1),
      actorKind: 'agent',
      actorId: 'agt_1',
      targetType: 'agent',
      targetId: 'agt_1',
    });
    await insertEvent(ws, {
      action: 'credential.participant_token.issued',
      createdAt: at(2),
      actorKind: 'participant',
      actorId: 'prt_1',
      targetType: 'participant',
      targetId: 'prt_1',
    });
    await insertEvent(ws, {
      action: 'api_key.created',
      createdAt: at(3),
      actorKind: 'participant',
      actorId: 'prt_1',
      targetType: 'api_key',
      targetId: 'key_1',
    });
    // `_` is a LIKE wildcard: a prefix filter must not let it match any character.
    await insertEvent(ws, { action: 'apixkey.created', createdAt: at(4), targetType: 'api_key' });
    await insertEvent(ws, { action: 'credentials.rotated', createdAt: at(5) });
  });

  const actions = async (query: Query) => {
    const res = await list({ token: owner.token }, owner.workspace.slug, query);
    expect(res.status).toBe(200);
    return (res.page?.data ?? []).map((e) => e.action);
  };

  test('when action is exact, then only that action; when it ends in .* or ., then that dotted prefix', async () => {
    expect(await actions({ action: 'api_key.created' })).toEqual(['api_key.created']);
    expect(await actions({ action: 'credential' })).toEqual([]);
    const dotted = ['credential.participant_token.issued', 'credential.runtime.issued'];
    expect(await actions({ action: 'credential.*' })).toEqual(dotted);
    expect(await actions({ action: 'credential.' })).toEqual(dotted);
  });

  test('when action ends in *, then it is a plain prefix, and _ in it matches only _', async () => {
    expect(await actions({ action: 'credential*' })).toEqual([
      'credentials.rotated',
      'credential.participant_token.issued',
      'credential.runtime.issued',
    ]);
    expect(await actions({ action: 'api_key.*' })).toEqual(['api_key.created']);
    expect(await actions({ action: 'api_key*' })).toEqual(['api_key.created']);
  });

  test('when actor and target filters are given, then they combine with AND', async () => {
    expect(await actions({ actor_kind: 'agent' })).toEqual(['credential.runtime.issued']);
    expect(await actions({ actor_kind: 'participant', actor_id: 'prt_1' })).toEqual([
      'api_key.created',
      'credential.participant_token.issued',
    ]);
    expect(await actions({ target_type: 'api_key' })).toEqual(['apixkey.created', 'api_key.created']);
    expect(await actions({ target_type: 'api_key', target_id: 'key_1' })).toEqual(['api_key.created']);
    expect(await actions({ actor_id: 'prt_1', action: 'credential.*' })).toEqual([
      'credential.participant_token.issued',
    ]);
  });

  test('when since and until are given, then since is inclusive and until exclusive', async () => {
    expect(await actions({ since: at(2).toISOString(), until: at(4).toISOString() })).toEqual([
      'api_key.created',
      'credential.participant_token.issued',
    ]);
    expect(await actions({ since: at(5).toISOString() })).toEqual(['credentials.rotated']);
    expect(await actions({ until: at(1).toISOString() })).toEqual([]);
    expect(await actions({ since: '2026-03-01T13:04:00+01:00' })).toEqual([
      'credentials.rotated',
      'apixkey.created',
    ]);
  });

  test('when a filter is malformed, then 400 names it', async () => {
    const bad: [Query, string][] = [
      [{ limit: 0 }, 'validation_failed'],
      [{ limit: 201 }, 'validation_failed'],
      [{ action: 'credential.**' }, 'validation_failed'],
      [{ action: "x' OR 1=1" }, 'validation_failed'],
      [{ actor_kind: 'robot' }, 'validation_failed'],
      [{ since: 'yesterday' }, 'validation_failed'],
      [{ cursor: 'not a cursor!' }, 'validation_failed'],
      [{ cursor: 'bm90LWpzb24' }, 'invalid_cursor'],
      [{ cursor: Buffer.from('[1,"2026-01-01T00:00:00Z","aud_1"]').toString('base64url') }, 'invalid_cursor'],
      [{ since: at(3).toISOString(), until: at(2).toISOString() }, 'invalid_time_range'],
    ];
    for (const [query, code] of bad) {
      const res = await list({ token: owner.token }, owner.workspace.slug, query);
      expect({ query, status: res.status, code: res.error?.code }).toEqual({ query, status: 400, code });
    }
  });
});

describe('audit log: pagination', () => {
  test('when pages are followed, then every event comes exactly once, newest first, ties broken by id', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const same = new Date('2026-04-01T10:00:00.000Z');
    const inserted = [];
    for (let i = 0; i < 5; i += 1) {
      inserted.push(await insertEvent(ws, { action: 'tie.event', createdAt: same }));
    }
    for (let i = 0; i < 6; i += 1) {
      inserted.push(
        await insertEvent(ws, {
          action: 'spread.event',
          createdAt: new Date(same.getTime() + (i - 3) * 1000),
        }),
      );
    }
    const expected = [...inserted]
      .sort(
        (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )
      .map((e) => e.id);
    for (const limit of [1, 2, 3, 4, 11, 50]) {
      expect(await allPages(owner, {}, limit)).toEqual(expected);
    }
  });

  test('when events are appended while paging, then the pages already started neither repeat nor skip', async () => {
    const owner = await t.seedMember('owner');
    const ws = owner.workspace.id;
    const start = Date.parse('2026-05-01T00:00:00.000Z');
    const old = [];
    for (let i = 0; i < 6; i += 1) {
      old.push(await insertEvent(ws, { action: 'old.event', createdAt: new Date(start + i * 1000) }));
    }
    const first = await list({ token: owner.token }, owner.workspace.slug, { limit: 3 });
    expect(first.page?.data.map((e) => e.id)).toEqual(
      old
        .slice(3)
        .reverse()
        .map((e) => e.id),
    );
    await insertEvent(ws, { action: 'new.event', createdAt: new Date(start + 60_000) });
    await insertEvent(ws, { action: 'new.event', createdAt: new Date(start + 2500) });
    const second = await list({ token: owner.token }, owner.workspace.slug, {
      limit: 3,
      cursor: first.page?.next_cursor ?? undefined,
    });
    const secondActions = second.page?.data.map((e) => e.action);
    // The event inserted between two old ones is older than the cursor, so it shows up in its place.
    expect(secondActions).toEqual(['new.event', 'old.event', 'old.event']);
    expect(second.page?.next_cursor).not.toBeNull();
    const third = await list({ token: owner.token }, owner.workspace.slug, {
      limit: 3,
      cursor: second.page?.next_cursor ?? undefined,
    });
    expect(third.page?.data.map((e) => e.id)).toEqual([old[0]?.id]);
    expect(third.page?.next_cursor).toBeNull();
  });

  test('when the cursor is decoded, then it holds a position only and round-trips exactly', () => {
    const position = { createdAt: new Date('2026-01-02T03:04:05.678Z'), id: 'aud_01abc' };
    const cursor = encodeAuditCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeAuditCursor(cursor)).toEqual(position);
  });
});

describe('audit log: isolation and secrets', () => {
  test("when two workspaces have events, then neither ever sees the other's, whatever the filters or cursor", async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    const aKey = await createKey(t, a, { scopes: ['audit:read'] });
    const bKey = await createKey(t, b, { scopes: ['audit:read', 'projects:write'] });
    await t.client({ apiKey: bKey.key }).POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: b.workspace.slug } },
      body: { code: 'SECRETPLAN', name: 'B only' },
    });
    const bEvents = await t.database.prisma.auditEvent.findMany({ where: { workspaceId: b.workspace.id } });
    expect(bEvents.length).toBeGreaterThanOrEqual(2);
    const bIds = new Set(bEvents.map((e) => e.id));
    const newestOfB = [...bEvents].sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime())[0];
    // Also hub-wide events (no workspace): never part of a workspace's log.
    await insertEvent(null, { action: 'hub.maintenance' });

    const probes: Query[] = [
      {},
      { actor_id: b.participantId },
      { actor_id: bKey.id },
      { actor_kind: 'api_key' },
      { target_type: 'project' },
      { target_id: bKey.id },
      { action: 'project.created' },
      { action: 'hub.*' },
      { cursor: encodeAuditCursor({ createdAt: new Date(Date.now() + 60_000), id: 'aud_zzzz' }) },
      ...(newestOfB ? [{ cursor: encodeAuditCursor(newestOfB) }] : []),
    ];
    for (const credential of [{ token: a.token }, { apiKey: aKey.key }]) {
      for (const query of probes) {
        const res = await list(credential, a.workspace.slug, query);
        expect(res.status).toBe(200);
        for (const event of res.page?.data ?? []) {
          expect(bIds.has(event.id)).toBe(false);
          expect(event.action).not.toBe('hub.maintenance');
        }
        expect(JSON.stringify(res.page)).not.toContain('SECRETPLAN');
      }
    }
    // B's credentials cannot read A's log at all.
    for (const credential of [{ token: b.token }, { apiKey: bKey.key }]) {
      const res = await list(credential, a.workspace.id);
      expect({ status: res.status, code: res.error?.code }).toEqual({
        status: 403,
        code: 'workspace_forbidden',
      });
    }
  });

  test('when an API key is created and a participant signs in, then no audit row, audit response or log holds a secret', async () => {
    const owner = await t.seedMember('owner');
    const created = await createKey(t, owner, { name: 'secret-check', preset: 'automation' });
    const token = await t.login(owner.email, owner.password);
    const secrets = [created.key, secretOf(created.key), owner.password, token, owner.token];

    const rows = await t.database.prisma.auditEvent.findMany();
    const keyEvent = rows.find((r) => r.action === 'api_key.created' && r.targetId === created.id);
    const loginEvents = rows.filter(
      (r) => r.action === 'credential.participant_token.issued' && r.targetId === owner.participantId,
    );
    expect(keyEvent).toBeDefined();
    expect(loginEvents.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      const text = JSON.stringify(row);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }

    const res = await list({ token }, owner.workspace.slug);
    expect(res.page?.data.some((e) => e.action === 'api_key.created')).toBe(true);
    const body = JSON.stringify(res.page);
    for (const secret of secrets) expect(body).not.toContain(secret);
    const logs = t.logs.join('');
    for (const secret of [created.key, secretOf(created.key), owner.password]) {
      expect(logs).not.toContain(secret);
    }
  });

  test('when something tries to slip a secret into event data, then the repository redacts it before storing', async () => {
    const owner = await t.seedMember('owner');
    const created = await createKey(t, owner, { preset: 'read-only' });
    await createAuditRepository(t.database.prisma).record({
      workspaceId: owner.workspace.id,
      action: 'test.leak_attempt',
      data: { api_key: created.key, note: `key ${created.key}`, nested: { password: 'hunter2-hunter2' } },
    });
    const res = await list({ token: owner.token }, owner.workspace.slug, { action: 'test.leak_attempt' });
    const body = JSON.stringify(res.page);
    expect(res.page?.data).toHaveLength(1);
    expect(body).not.toContain(secretOf(created.key));
    expect(body).not.toContain('hunter2-hunter2');
  });
});

describe('audit log: append-only', () => {
  test('when the contract is read, then the audit log has a read operation and no write, update or delete', () => {
    const auditOps = listOperations(hubDocument).filter((op) => op.path.includes('/audit'));
    expect(auditOps.map((op) => `${op.method} ${op.path}`)).toEqual([
      'get /api/v1/workspaces/{workspace}/audit-events',
    ]);
    expect(Object.keys(createAuditRepository(t.database.prisma))).toEqual(['record']);
  });

  test('when anyone tries to write, change or delete events over HTTP, then 405 and the log is unchanged', async () => {
    const owner = await t.seedMember('owner');
    await insertEvent(owner.workspace.id, { action: 'kept.event' });
    const before = await t.database.prisma.auditEvent.count();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await fetch(`${t.url}/api/v1/workspaces/${owner.workspace.slug}/audit-events`, {
        method,
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
        body: method === 'DELETE' ? undefined : JSON.stringify({ action: 'forged.event' }),
      });
      expect({ method, status: res.status }).toEqual({ method, status: 405 });
      expect(res.headers.get('allow')).toBe('GET');
    }
    expect(await t.database.prisma.auditEvent.count()).toBe(before);
  });
});
