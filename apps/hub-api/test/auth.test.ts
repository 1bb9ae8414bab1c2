import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import { createHubCredentialResolver } from '../src/auth/credential-resolver';
import { startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('participant sign-in', () => {
  test('when the password is right, then a participant JWT works on GET /api/v1/me', async () => {
    const member = await t.seedMember('admin');
    const res = await t.client({ token: member.token }).GET('/api/v1/me');
    expect(res.response.status).toBe(200);
    expect(res.data?.data.participant.email).toBe(member.email);
    expect(res.data?.data.memberships).toEqual([
      expect.objectContaining({
        role: 'admin',
        workspace: expect.objectContaining({ slug: member.workspace.slug }),
      }),
    ]);
  });

  test('when the email is typed in another case, then sign-in still works', async () => {
    const member = await t.seedMember();
    await expect(t.login(member.email.toUpperCase(), member.password)).resolves.toMatch(/^eyJ/);
  });

  test('when the password is wrong or the email unknown, then both get the same 401', async () => {
    const member = await t.seedMember();
    const wrong = await t
      .client()
      .POST('/api/v1/auth/login', { body: { email: member.email, password: 'nope' } });
    const unknown = await t
      .client()
      .POST('/api/v1/auth/login', { body: { email: 'nobody@example.test', password: 'nope' } });
    expect(wrong.response.status).toBe(401);
    expect(unknown.response.status).toBe(401);
    expect(wrong.error?.code).toBe('invalid_credentials');
    expect(unknown.error?.detail).toBe(wrong.error?.detail);
  });

  test('when ten sign-ins fail in a row, then the account is locked with Retry-After, even for the right password', async () => {
    const member = await t.seedMember();
    for (let i = 0; i < 10; i += 1) {
      const res = await t
        .client()
        .POST('/api/v1/auth/login', { body: { email: member.email, password: 'wrong' } });
      expect(res.response.status).toBe(401);
    }
    const locked = await t
      .client()
      .POST('/api/v1/auth/login', { body: { email: member.email, password: member.password } });
    expect(locked.response.status).toBe(429);
    expect(locked.error?.code).toBe('login_locked');
    expect(Number(locked.response.headers.get('retry-after'))).toBeGreaterThan(800);
  });

  test('when the login body is malformed, then 400 problem+json', async () => {
    const res = await fetch(`${t.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email":',
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('malformed_json');
  });

  test('when a token is tampered with, then it is refused with 401', async () => {
    const member = await t.seedMember();
    const [header, payload, signature] = member.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'prt_someoneelse' })).toString('base64url')}.${signature}`;
    const res = await t.client({ token: forged }).GET('/api/v1/me');
    expect(res.response.status).toBe(401);
    expect(res.error?.code).toBe('credential_invalid');
  });

  test('when a token is used after the participant is deleted, then 401', async () => {
    const member = await t.seedMember();
    await t.database.prisma.participant.delete({ where: { id: member.participantId } });
    expect((await t.client({ token: member.token }).GET('/api/v1/me')).response.status).toBe(401);
  });
});

describe('signing keys', () => {
  test('when a verifier fetches the JWKS over HTTP, then it verifies a participant token', async () => {
    const member = await t.seedMember();
    const verifier = createTokenVerifier({
      issuer: 'http://hub.test',
      getJwks: createRemoteJwks({ url: `${t.url}/.well-known/jwks.json` }),
    });
    const verified = await verifier.verify(member.token, { audience: 'participant' });
    expect(verified.sub).toBe(member.participantId);
  });

  test('when keys rotate, then both keys are published and tokens from before and after verify', async () => {
    const before = await t.seedMember();
    await t.hub.keys.rotate(3600);
    const after = await t.seedMember();
    const jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as { keys: unknown[] };
    expect(jwks.keys).toHaveLength(2);
    for (const token of [before.token, after.token]) {
      expect((await t.client({ token }).GET('/api/v1/me')).response.status).toBe(200);
    }
    const kid = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[0] as string, 'base64url').toString()).kid;
    expect(kid(before.token)).not.toBe(kid(after.token));
  });

  test('when the sign-in flow runs, then no password or token reaches the logs or the audit log', async () => {
    const member = await t.seedMember();
    await t.client({ token: member.token }).GET('/api/v1/me');
    const logs = t.logs.join('');
    expect(logs).not.toContain(member.password);
    expect(logs).not.toContain(member.token);
    const events = await t.database.prisma.auditEvent.findMany();
    const audit = JSON.stringify(events);
    expect(audit).not.toContain(member.password);
    expect(audit).not.toContain(member.token);
    expect(
      events.some(
        (e) => e.action === 'credential.participant_token.issued' && e.targetId === member.participantId,
      ),
    ).toBe(true);
  });
});

describe('agent tokens', () => {
  test('when an agent token is sent, then the hub resolves the agent, and after eviction it is refused', async () => {
    const owner = await t.seedMember('owner');
    const agent = await t.seedAgent(owner.workspace.id);
    const resolver = createHubCredentialResolver({
      db: t.database.prisma,
      keys: t.hub.keys,
      serviceToken: 'x'.repeat(40),
      logger: t.hub.deps.logger,
    });
    await expect(resolver.bearer!(agent.token)).resolves.toMatchObject({
      kind: 'agent',
      agentId: agent.id,
      workspaceId: owner.workspace.id,
    });
    await t.database.prisma.agent.update({ where: { id: agent.id }, data: { status: 'evicted' } });
    await expect(resolver.bearer!(agent.token)).resolves.toBeNull();
  });

  test('when an agent token is used on a participant route, then 403', async () => {
    const owner = await t.seedMember('owner');
    const agent = await t.seedAgent(owner.workspace.id);
    const res = await t.client({ token: agent.token }).GET('/api/v1/me');
    expect(res.response.status).toBe(403);
    expect(res.error?.code).toBe('actor_not_allowed');
  });
});
