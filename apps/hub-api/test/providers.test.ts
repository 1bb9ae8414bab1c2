import { unwrap } from '@svc/contracts';
import type { Agent } from '../src/generated/prisma/client';
import { issueRuntimeCredential } from '../src/use-cases/providers/issue-runtime-credential';
import { providerCredentialAad } from '../src/domain/provider-credentials';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';
import { expectNoSecretsStored } from './support/runtime-helpers';

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

const SECRET = 'sk-ant-api03-FIRSTsecretValue0123456789abcd';
const ROTATED = 'sk-ant-api03-SECONDsecretValue987654321wxyz';

function credentials(member: SeededMember) {
  const api = t.client({ token: member.token });
  const workspace = member.workspace.slug;
  return {
    set: (provider: string, secret: string) =>
      api.PUT('/api/v1/workspaces/{workspace}/provider-credentials/{provider}', {
        params: { path: { workspace, provider } },
        body: { secret },
      }),
    list: () =>
      api.GET('/api/v1/workspaces/{workspace}/provider-credentials', { params: { path: { workspace } } }),
    remove: (provider: string) =>
      api.DELETE('/api/v1/workspaces/{workspace}/provider-credentials/{provider}', {
        params: { path: { workspace, provider } },
      }),
  };
}

describe('provider catalog', () => {
  test('when a participant, a read-only key or an agent lists the catalog, then each gets the active exact identifiers', async () => {
    const owner = await t.seedMember('viewer');
    await t.database.prisma.providerModel.create({
      data: { id: 'openai/gpt-old', provider: 'openai', model: 'gpt-old', displayName: 'Old', active: false },
    });
    const byParticipant = unwrap(await t.client({ token: owner.token }).GET('/api/v1/provider-models'));
    expect(byParticipant).toContainEqual({
      id: 'anthropic/claude-sonnet-4-5',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      display_name: 'Claude Sonnet 4.5',
    });
    expect(byParticipant.map((m) => m.id)).not.toContain('openai/gpt-old');
    expect(byParticipant.every((m) => m.id === `${m.provider}/${m.model}`)).toBe(true);
    const ids = byParticipant.map((m) => m.id);
    expect(ids).toEqual([...ids].sort());

    const admin = await t.seedMember('owner');
    const readOnly = await createKey(t, admin, { preset: 'read-only' });
    expect(unwrap(await t.client({ apiKey: readOnly.key }).GET('/api/v1/provider-models'))).toEqual(
      byParticipant,
    );
    const agent = await t.seedAgent(admin.workspace.id);
    expect(unwrap(await t.client({ token: agent.token }).GET('/api/v1/provider-models'))).toEqual(
      byParticipant,
    );
  });

  test('when a key lacks agents:read, then the catalog is 403', async () => {
    const admin = await t.seedMember('owner');
    const key = await createKey(t, admin, { scopes: ['projects:read'] });
    const res = await t.client({ apiKey: key.key }).GET('/api/v1/provider-models');
    expect(res.error).toMatchObject({ code: 'scope_missing', missing_scopes: ['agents:read'] });
  });
});

describe('provider credentials', () => {
  test('when an owner sets and rotates a credential, then only metadata is returned and the secret is sealed', async () => {
    const owner = await t.seedMember('owner');
    const api = credentials(owner);
    const created = await api.set('anthropic', SECRET);
    expect(created.response.status).toBe(201);
    const first = unwrap(created);
    expect(first).toEqual({
      provider: 'anthropic',
      last4: 'abcd',
      created_at: expect.any(String),
      rotated_at: first.created_at,
    });
    const row = await t.database.prisma.providerCredential.findFirstOrThrow({
      where: { workspaceId: owner.workspace.id, provider: 'anthropic' },
    });
    expect(row.secretCiphertext).not.toContain(SECRET);
    expect(
      t.hub.deps.box.open(row.secretCiphertext, providerCredentialAad(owner.workspace.id, 'anthropic')),
    ).toBe(SECRET);
    expect(() =>
      t.hub.deps.box.open(row.secretCiphertext, providerCredentialAad('ws_other', 'anthropic')),
    ).toThrow();
    expect(row.createdById).toBe(owner.participantId);

    const rotatedRes = await api.set('anthropic', ROTATED);
    expect(rotatedRes.response.status).toBe(200);
    const rotated = unwrap(rotatedRes);
    expect(rotated).toMatchObject({ provider: 'anthropic', last4: 'wxyz', created_at: first.created_at });
    expect(new Date(rotated.rotated_at).getTime()).toBeGreaterThanOrEqual(
      new Date(first.rotated_at).getTime(),
    );
    const after = await t.database.prisma.providerCredential.findUniqueOrThrow({ where: { id: row.id } });
    expect(
      t.hub.deps.box.open(after.secretCiphertext, providerCredentialAad(owner.workspace.id, 'anthropic')),
    ).toBe(ROTATED);

    const listed = unwrap(await api.list());
    expect(listed).toEqual([rotated]);
    expect(JSON.stringify([created.data, rotatedRes.data, listed])).not.toMatch(/FIRSTsecret|SECONDsecret/);

    const events = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: { startsWith: 'credential.provider.' } },
      orderBy: { id: 'asc' },
    });
    expect(events.map((e) => [e.action, e.data])).toEqual([
      ['credential.provider.set', { provider: 'anthropic', last4: 'abcd' }],
      ['credential.provider.rotated', { provider: 'anthropic', last4: 'wxyz' }],
    ]);
    await expectNoSecretsStored(t, owner.workspace.id, [SECRET, ROTATED]);
  });

  test('when an owner deletes a credential, then it is gone, audited, and a second delete is 404', async () => {
    const owner = await t.seedMember('owner');
    const api = credentials(owner);
    unwrap(await api.set('openai', SECRET));
    const removed = await api.remove('openai');
    expect(removed.response.status).toBe(204);
    expect(unwrap(await api.list())).toEqual([]);
    expect(
      await t.database.prisma.providerCredential.count({ where: { workspaceId: owner.workspace.id } }),
    ).toBe(0);
    const again = await api.remove('openai');
    expect(again.response.status).toBe(404);
    expect(again.error?.code).toBe('provider_credential_not_found');
    const [event] = await t.database.prisma.auditEvent.findMany({
      where: { workspaceId: owner.workspace.id, action: 'credential.provider.revoked' },
    });
    expect(event).toMatchObject({
      actorKind: 'participant',
      actorId: owner.participantId,
      data: { provider: 'openai', last4: 'abcd' },
    });
    await expectNoSecretsStored(t, owner.workspace.id, [SECRET]);
  });

  test('when the provider is not in the catalog or the secret is malformed, then 400 and nothing is stored', async () => {
    const owner = await t.seedMember('owner');
    const api = credentials(owner);
    const unknown = await api.set('mistral', SECRET);
    expect(unknown.response.status).toBe(400);
    expect(unknown.error?.code).toBe('provider_unknown');
    expect(unknown.error?.providers).toEqual(['anthropic', 'google', 'local', 'openai']);
    const padded = await api.set('openai', `${SECRET}\n`);
    expect(padded.error?.code).toBe('provider_secret_invalid');
    const short = await api.set('openai', 'short');
    expect(short.error?.code).toBe('validation_failed');
    expect(JSON.stringify([unknown.error, padded.error, short.error])).not.toContain(SECRET);
    expect(
      await t.database.prisma.providerCredential.count({ where: { workspaceId: owner.workspace.id } }),
    ).toBe(0);
  });

  test('when a member manages credentials, then 403; another workspace cannot see them', async () => {
    const owner = await t.seedMember('owner');
    const member = await t.seedMember('member', owner.workspace);
    const stranger = await t.seedMember('owner');
    unwrap(await credentials(owner).set('google', SECRET));
    const byMember = credentials(member);
    expect((await byMember.set('google', ROTATED)).error?.code).toBe('role_forbidden');
    expect((await byMember.list()).error?.code).toBe('role_forbidden');
    expect((await byMember.remove('google')).error?.code).toBe('role_forbidden');
    const res = await t
      .client({ token: stranger.token })
      .GET('/api/v1/workspaces/{workspace}/provider-credentials', {
        params: { path: { workspace: owner.workspace.slug } },
      });
    expect(res.error?.code).toBe('workspace_forbidden');
    expect(unwrap(await credentials(stranger).list())).toEqual([]);
  });

  test('when the workspace sets and later deletes its credential, then runtime credentials fall back to it and then stop', async () => {
    const owner = await t.seedMember('owner');
    const seeded = await t.seedAgent(owner.workspace.id);
    const agent: Agent = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: seeded.id } });
    const input = {
      agent,
      model: 'google/gemini-2.5-flash',
      launchPath: 'direct' as const,
      actor: undefined,
    };
    await expect(issueRuntimeCredential(t.hub.deps, input)).rejects.toMatchObject({
      code: 'provider_credential_unavailable',
    });
    unwrap(await credentials(owner).set('google', SECRET));
    const issued = await issueRuntimeCredential(t.hub.deps, input);
    expect(issued.authorizationSource).toBe('workspace_provider');
    expect(issued.token).not.toContain(SECRET);
    expect((await credentials(owner).remove('google')).response.status).toBe(204);
    await expect(issueRuntimeCredential(t.hub.deps, input)).rejects.toMatchObject({
      code: 'provider_credential_unavailable',
    });
  });
});
