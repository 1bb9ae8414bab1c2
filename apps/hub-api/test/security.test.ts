import { jwtAttacks } from '@svc/testing';
import type { JwtAttack } from '@svc/testing';
import { API_KEY_CACHE_TTL_MS } from '../src/auth/api-key-cache';
import { createKey, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { SeededAgent, SeededMember, TestHub } from './support/harness';

/**
 * The hub's credential checks from outside, against the running hub: hostile JWTs built with its real signing key
 * (so a refusal proves the check, and the genuine token built the same way is accepted), tokens of another kind
 * where they are not allowed, and revoked, expired and narrowed API keys. Another workspace's credentials on every
 * resource addressed by id are the access matrix's `other_workspace` and `foreign_id` cases.
 */

let offsetMs = 0;
let t: TestHub;
let home: SeededMember;
let stranger: SeededMember;
let agent: SeededAgent;
let otherAgent: SeededAgent;
let participantAttacks: { valid: string; attacks: JwtAttack[] };
let agentAttacks: { valid: string; attacks: JwtAttack[] };

async function call(path: string, headers: Record<string, string>, method = 'GET') {
  const res = await fetch(`${t.url}${path}`, { method, headers });
  const body = (await res.json().catch(() => ({}))) as { code?: string; data?: unknown };
  return { status: res.status, code: body.code, data: body.data };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  // The hub's clock, moved forward only by the cache test below (token times are checked against the real one).
  t = await startTestHub({ now: () => new Date(Date.now() + offsetMs) });
  home = await t.seedMember('owner');
  stranger = await t.seedMember('owner');
  agent = await t.seedAgent(home.workspace.id);
  otherAgent = await t.seedAgent(stranger.workspace.id);
  const row = await t.database.prisma.signingKey.findFirstOrThrow({ orderBy: { activatedAt: 'desc' } });
  const signingKey = { kid: row.kid, privateKeyPem: t.hub.deps.box.open(row.privateKeyCiphertext, row.kid) };
  participantAttacks = jwtAttacks({
    signingKey,
    issuer: 'http://hub.test',
    audience: 'participant',
    subject: home.participantId,
    claims: { email: home.email },
    otherToken: stranger.token,
  });
  agentAttacks = jwtAttacks({
    signingKey,
    issuer: 'http://hub.test',
    audience: 'agent',
    subject: agent.id,
    claims: {
      workspace_id: agent.workspaceId,
      runtime_instance_id: agent.runtimeInstanceId,
      agent_name: agent.name,
    },
    otherToken: otherAgent.token,
  });
});
afterAll(() => t.close());

describe('hostile participant tokens on GET /api/v1/me', () => {
  test('when the genuine token is built the same way, then it is accepted (the attacks below are meaningful)', async () => {
    const res = await call('/api/v1/me', bearer(participantAttacks.valid));
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ participant: { id: home.participantId } });
  });

  test('when every hostile variant is sent, then each is 401 credential_invalid with no data', async () => {
    const answers = await Promise.all(
      participantAttacks.attacks.map(
        async (a) => [a.name, await call('/api/v1/me', bearer(a.token))] as const,
      ),
    );
    for (const [name, res] of answers) {
      expect({ name, status: res.status, code: res.code, data: res.data }).toEqual({
        name,
        status: 401,
        code: 'credential_invalid',
        data: undefined,
      });
    }
    expect(answers.length).toBeGreaterThanOrEqual(25);
  });
});

describe('hostile agent tokens on GET /api/v1/agents/me', () => {
  test('when the genuine token is built the same way, then it is accepted', async () => {
    const res = await call('/api/v1/agents/me', bearer(agentAttacks.valid));
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ id: agent.id });
  });

  test.each([0, 1])(
    'when every hostile variant is sent (batch %i), then each is 401 credential_invalid',
    async (half) => {
      const batch = agentAttacks.attacks.filter((_, i) => i % 2 === half);
      for (const a of batch) {
        const res = await call('/api/v1/agents/me', bearer(a.token));
        // A genuine participant token (the hub's own key, audience participant) is a participant here: the
        // route refuses the actor kind.
        const expected =
          a.name === 'audience participant'
            ? { status: 403, code: 'actor_not_allowed' }
            : { status: 401, code: 'credential_invalid' };
        expect({ name: a.name, status: res.status, code: res.code }).toEqual({ name: a.name, ...expected });
      }
    },
  );
});

describe('a credential of another kind where it is not allowed', () => {
  const ticket = async () => {
    const res = await fetch(`${t.url}/api/v1/agents/${agent.id}/console-tickets`, {
      method: 'POST',
      headers: { ...bearer(home.token), 'content-type': 'application/json' },
      body: '{}',
    });
    return ((await res.json()) as { data: { ticket: string } }).data.ticket;
  };
  const runtimeCredential = () =>
    t.hub.deps.keys.issuer.issue({
      audience: 'runtime',
      subject: agent.id,
      ttlSeconds: 600,
      claims: { workspace_id: agent.workspaceId, provider: 'local', model: 'local/echo' },
    }).token;

  test('when a console ticket or a runtime credential is sent as a bearer token, then 401 on participant and agent routes', async () => {
    for (const token of [await ticket(), runtimeCredential()]) {
      expect(await call('/api/v1/me', bearer(token))).toMatchObject({
        status: 401,
        code: 'credential_invalid',
      });
      expect(await call('/api/v1/agents/me', bearer(token))).toMatchObject({
        status: 401,
        code: 'credential_invalid',
      });
    }
  });

  test('when an agent token is used on a participant route or a participant token on an agent route, then 403', async () => {
    expect(await call('/api/v1/me', bearer(agent.token))).toMatchObject({
      status: 403,
      code: 'actor_not_allowed',
    });
    expect(await call('/api/v1/agents/me', bearer(home.token))).toMatchObject({
      status: 403,
      code: 'actor_not_allowed',
    });
  });

  test('when a credential travels in the header of another kind, then 401', async () => {
    const key = (await createKey(t, home, { preset: 'read-only' })).key;
    const cases: [string, Record<string, string>][] = [
      ['/api/v1/workspaces', { 'x-api-key': home.token }],
      ['/api/v1/workspaces', { 'x-api-key': agent.token }],
      ['/api/v1/me', bearer(key)],
      ['/api/v1/me', bearer(SERVICE_TOKEN)],
      ['/internal/v1/projects/prj_x/roster', { 'x-svc-service-token': home.token }],
      ['/internal/v1/projects/prj_x/roster', { 'x-svc-service-token': key }],
      ['/api/v1/workspaces', { 'x-svc-relay-token': key }],
    ];
    for (const [path, headers] of cases) {
      expect({ path, ...(await call(path, headers)) }).toMatchObject({
        path,
        status: 401,
        code: 'credential_invalid',
      });
    }
  });

  test('when two valid credentials are sent at once, then 401: no route serves two identities', async () => {
    const key = (await createKey(t, home, { preset: 'read-only' })).key;
    expect(await call('/api/v1/workspaces', { ...bearer(home.token), 'x-api-key': key })).toMatchObject({
      status: 401,
      code: 'credential_invalid',
    });
  });
});

describe('API keys that no longer hold', () => {
  test('when a key is revoked, then the next request with it is 401 on this replica', async () => {
    const created = await createKey(t, home, { preset: 'read-only' });
    expect((await call('/api/v1/workspaces', { 'x-api-key': created.key })).status).toBe(200);
    const revoked = await call(
      `/api/v1/workspaces/${home.workspace.slug}/api-keys/${created.id}`,
      bearer(home.token),
      'DELETE',
    );
    expect(revoked.status).toBe(200);
    expect(await call('/api/v1/workspaces', { 'x-api-key': created.key })).toMatchObject({
      status: 401,
      code: 'credential_invalid',
    });
  });

  test('when a key reaches its expiry, then it is refused from that moment', async () => {
    const created = await createKey(t, home, {
      preset: 'read-only',
      expires_at: new Date(Date.now() + 1_500).toISOString(),
    });
    expect((await call('/api/v1/workspaces', { 'x-api-key': created.key })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_600));
    expect(await call('/api/v1/workspaces', { 'x-api-key': created.key })).toMatchObject({
      status: 401,
      code: 'credential_invalid',
    });
  });

  test('when a key is created already expired, then it is refused at creation', async () => {
    const res = await fetch(`${t.url}/api/v1/workspaces/${home.workspace.slug}/api-keys`, {
      method: 'POST',
      headers: { ...bearer(home.token), 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'late',
        preset: 'read-only',
        expires_at: new Date(Date.now() - 1000).toISOString(),
      }),
    });
    expect(res.status).toBe(400);
  });

  test('when a key row loses a scope, then once the cache time has passed the dropped scope is 403 and the kept one works', async () => {
    const created = await createKey(t, home, { scopes: ['workspaces:read', 'projects:read'] });
    expect((await call('/api/v1/workspaces', { 'x-api-key': created.key })).status).toBe(200);
    await t.database.prisma.apiKey.update({ where: { id: created.id }, data: { scopes: ['projects:read'] } });
    offsetMs = API_KEY_CACHE_TTL_MS + 1;
    try {
      expect(await call('/api/v1/workspaces', { 'x-api-key': created.key })).toMatchObject({
        status: 403,
        code: 'scope_missing',
      });
      const projects = await call(`/api/v1/workspaces/${home.workspace.slug}/projects`, {
        'x-api-key': created.key,
      });
      expect(projects.status).toBe(200);
    } finally {
      offsetMs = 0;
    }
  });
});
