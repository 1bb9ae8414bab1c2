import { newId } from '@svc/service-kit';
import type { AppError } from '@svc/service-kit';
import type { HubDeps } from '../src/deps';
import type { Agent } from '../src/generated/prisma/client';
import { issueRuntimeCredential } from '../src/use-cases/providers/issue-runtime-credential';
import { refreshRuntimeCredential } from '../src/use-cases/providers/refresh-runtime-credential';
import { auditRows, registerAgent } from './support/agents-fixtures';
import { startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

let t: TestHub;
beforeAll(async () => {
  // The routes use the hub's own settings: `local` is hub-managed, anything else needs a workspace credential.
  t = await startTestHub({ settings: { HUB_MANAGED_PROVIDERS: ['local'] } });
}, 30_000);
afterAll(() => t.close());

const PROVIDER_SECRET = 'sk-ant-workspace-secret-0123456789abcdef';

function depsWith(settings: Partial<HubDeps['settings']>): HubDeps {
  return { ...t.hub.deps, settings: { ...t.hub.deps.settings, ...settings } };
}

async function seedAgentRow(owner: SeededMember): Promise<Agent> {
  const seeded = await t.seedAgent(owner.workspace.id);
  return t.database.prisma.agent.findUniqueOrThrow({ where: { id: seeded.id } });
}

async function setWorkspaceCredential(workspaceId: string, provider: string) {
  await t.database.prisma.providerCredential.create({
    data: {
      id: newId('pvc'),
      workspaceId,
      provider,
      secretCiphertext: t.hub.deps.box.seal(PROVIDER_SECRET, `${workspaceId}${provider}`),
      last4: PROVIDER_SECRET.slice(-4),
    },
  });
}

async function issuedEvents(agentId: string) {
  return t.database.prisma.auditEvent.findMany({
    where: { action: 'credential.runtime.issued', targetId: agentId },
  });
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a rejection');
}

describe('runtime credential issuance', () => {
  test('when the provider is hub-managed, then the credential is a short-lived runtime JWT with source hub_managed', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    await setWorkspaceCredential(owner.workspace.id, 'anthropic');
    const deps = depsWith({ hubManagedProviders: ['anthropic'] });
    const before = Date.now();
    const credential = await issueRuntimeCredential(deps, {
      agent,
      model: 'anthropic/claude-sonnet-4-5',
      launchPath: 'direct',
      actor: undefined,
      requestId: 'req-1',
    });
    expect(credential).toMatchObject({
      provider: 'anthropic',
      model: 'anthropic/claude-sonnet-4-5',
      authorizationSource: 'hub_managed',
    });
    expect(credential.credentialId).toMatch(/^rcd_[0-9a-z]{26}$/);
    const verified = await t.hub.keys.verifier.verify(credential.token, { audience: ['runtime'] });
    expect(verified.sub).toBe(agent.id);
    expect(verified.claims).toEqual({
      workspace_id: owner.workspace.id,
      runtime_instance_id: agent.runtimeInstanceId,
      provider: 'anthropic',
      model: 'anthropic/claude-sonnet-4-5',
      authorization_source: 'hub_managed',
      launch_path: 'direct',
      credential_id: credential.credentialId,
    });
    expect(verified.exp - verified.iat).toBe(600);
    expect(credential.expiresAt.getTime() - before).toBeLessThanOrEqual(15 * 60 * 1000 + 1000);
    expect(credential.token).not.toContain(PROVIDER_SECRET);
    expect(Buffer.from(credential.token.split('.')[1] ?? '', 'base64url').toString()).not.toContain(
      PROVIDER_SECRET.slice(-8),
    );

    const events = await issuedEvents(agent.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ workspaceId: owner.workspace.id, requestId: 'req-1' });
    expect(events[0]?.data).toEqual({
      credential_id: credential.credentialId,
      provider: 'anthropic',
      model: 'anthropic/claude-sonnet-4-5',
      authorization_source: 'hub_managed',
      launch_path: 'direct',
      expires_at: credential.expiresAt.toISOString(),
    });
    expect(JSON.stringify(events)).not.toContain(credential.token);
  });

  test('when the hub does not manage the provider but the workspace has a credential, then the source is workspace_provider', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    await setWorkspaceCredential(owner.workspace.id, 'openai');
    const credential = await issueRuntimeCredential(
      depsWith({ hubManagedProviders: ['anthropic'], serverLocalProviderAuth: true }),
      { agent, model: 'openai/gpt-5', launchPath: 'relay', actor: undefined },
    );
    expect(credential.authorizationSource).toBe('workspace_provider');
    const verified = await t.hub.keys.verifier.verify(credential.token, { audience: ['runtime'] });
    expect(verified.claims).toMatchObject({
      authorization_source: 'workspace_provider',
      launch_path: 'relay',
    });
    expect(JSON.stringify(verified)).not.toContain(PROVIDER_SECRET);
    const events = await issuedEvents(agent.id);
    expect(events.map((e) => (e.data as { authorization_source: string }).authorization_source)).toEqual([
      'workspace_provider',
    ]);
    expect(JSON.stringify(events)).not.toContain(PROVIDER_SECRET);
  });

  test('when another workspace has the provider credential, then it does not count for this agent', async () => {
    const owner = await t.seedMember('owner');
    const other = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    await setWorkspaceCredential(other.workspace.id, 'google');
    const error = await rejection(
      issueRuntimeCredential(depsWith({}), {
        agent,
        model: 'google/gemini-2.5-pro',
        launchPath: 'direct',
        actor: undefined,
      }),
    );
    expect(error).toMatchObject({ status: 409, code: 'provider_credential_unavailable' });
  });

  test('when neither hub nor workspace can authorize and server-local auth is enabled, then the source is server_local', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    const credential = await issueRuntimeCredential(
      depsWith({ hubManagedProviders: [], serverLocalProviderAuth: true }),
      {
        agent,
        model: 'local/echo',
        launchPath: 'direct',
        actor: undefined,
      },
    );
    expect(credential.authorizationSource).toBe('server_local');
    const [event] = await issuedEvents(agent.id);
    expect(event?.data).toMatchObject({ authorization_source: 'server_local', model: 'local/echo' });
  });

  test('when no source is available and server-local auth is off, then 409 provider_credential_unavailable with a recommended action and no audit event', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    const error = await rejection(
      issueRuntimeCredential(depsWith({ serverLocalProviderAuth: false }), {
        agent,
        model: 'anthropic/claude-opus-4-1',
        launchPath: 'direct',
        actor: undefined,
      }),
    );
    expect(error).toMatchObject({ status: 409, code: 'provider_credential_unavailable' });
    expect(error.extra).toMatchObject({ provider: 'anthropic' });
    expect(String(error.extra.recommended_action)).toContain('provider-credentials/anthropic');
    expect(await issuedEvents(agent.id)).toHaveLength(0);
  });

  test('when the model is not an exact active catalog identifier, then 400 provider_model_unsupported with close matches', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    const deps = depsWith({ hubManagedProviders: ['anthropic', 'openai'] });
    const alias = await rejection(
      issueRuntimeCredential(deps, {
        agent,
        model: 'claude-sonnet-4-5',
        launchPath: 'direct',
        actor: undefined,
      }),
    );
    expect(alias).toMatchObject({ status: 400, code: 'provider_model_unsupported' });
    expect((alias.extra.close_matches as string[])[0]).toBe('anthropic/claude-sonnet-4-5');

    await t.database.prisma.providerModel.create({
      data: {
        id: 'openai/gpt-retired',
        provider: 'openai',
        model: 'gpt-retired',
        displayName: 'x',
        active: false,
      },
    });
    const inactive = await rejection(
      issueRuntimeCredential(deps, {
        agent,
        model: 'openai/gpt-retired',
        launchPath: 'direct',
        actor: undefined,
      }),
    );
    expect(inactive).toMatchObject({ status: 400, code: 'provider_model_unsupported' });
    expect(inactive.extra.close_matches).not.toContain('openai/gpt-retired');
    expect(await issuedEvents(agent.id)).toHaveLength(0);
  });

  test('when the configured lifetime is at its maximum, then the credential lives at most 15 minutes', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    const credential = await issueRuntimeCredential(
      depsWith({ hubManagedProviders: ['openai'], runtimeCredentialTtlSeconds: 3600 }),
      { agent, model: 'openai/gpt-5-mini', launchPath: 'relay', actor: undefined },
    );
    const verified = await t.hub.keys.verifier.verify(credential.token, { audience: ['runtime'] });
    expect(verified.exp - verified.iat).toBe(900);
  });

  test('when the agent is evicted, then no credential is issued', async () => {
    const owner = await t.seedMember('owner');
    const seeded = await t.seedAgent(owner.workspace.id, { status: 'evicted', evictedAt: new Date() });
    const agent = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: seeded.id } });
    const error = await rejection(
      issueRuntimeCredential(depsWith({ hubManagedProviders: ['openai'] }), {
        agent,
        model: 'openai/gpt-5',
        launchPath: 'direct',
        actor: undefined,
      }),
    );
    expect(error).toMatchObject({ status: 409, code: 'agent_evicted' });
    expect(await issuedEvents(agent.id)).toHaveLength(0);
  });

  test('when credentials are issued, then the logs name the source and never hold the token or the provider secret', async () => {
    const owner = await t.seedMember('owner');
    const agent = await seedAgentRow(owner);
    await setWorkspaceCredential(owner.workspace.id, 'anthropic');
    const credential = await issueRuntimeCredential(depsWith({}), {
      agent,
      model: 'anthropic/claude-haiku-4-5',
      launchPath: 'direct',
      actor: {
        kind: 'agent',
        agentId: agent.id,
        workspaceId: agent.workspaceId,
        runtimeInstanceId: null,
        scopes: [],
      },
    });
    const [event] = await issuedEvents(agent.id);
    expect(event).toMatchObject({ actorKind: 'agent', actorId: agent.id });
    const logs = t.logs.join('\n');
    expect(logs).toContain(credential.credentialId);
    expect(logs).not.toContain(credential.token);
    expect(logs).not.toContain(PROVIDER_SECRET);
  });
});

const ISSUED = 'credential.runtime.issued';
const REFRESHED = 'credential.runtime.refreshed';

/** An agent registered with `model` on a fresh host and started directly through the API. */
async function startedAgent(model = 'local/echo') {
  const owner = await t.seedMember('owner');
  const host = await t.seedHost(owner.workspace.id);
  const registered = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
    runtime_instance_id: host.id,
    model,
  });
  const started = await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/start', {
    params: { path: { agentId: registered.id } },
    body: { launch_path: 'direct' },
  });
  expect(started.response.status).toBe(200);
  const data = started.data!.data;
  return {
    owner,
    agentId: registered.id,
    agentToken: data.agent_token,
    startCredential: data.runtime_credential,
  };
}

function refresh(agentToken: string) {
  return t.client({ token: agentToken }).POST('/api/v1/agents/me/runtime-credential');
}

function agentActor(agent: Pick<Agent, 'id' | 'workspaceId' | 'runtimeInstanceId'>) {
  return {
    kind: 'agent' as const,
    agentId: agent.id,
    workspaceId: agent.workspaceId,
    runtimeInstanceId: agent.runtimeInstanceId,
    scopes: [],
  };
}

describe('POST /api/v1/agents/me/runtime-credential', () => {
  test('when a directly started agent refreshes twice, then each answer is a new runtime credential for its model, audited as refreshed with the source, and the start still shows exactly one issuance', async () => {
    const { owner, agentId, agentToken, startCredential } = await startedAgent();
    const first = await refresh(agentToken);
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('cache-control')).toBe('no-store');
    const credential = first.data!.data;
    expect(credential).toMatchObject({
      provider: 'local',
      model: 'local/echo',
      authorization_source: 'hub_managed',
    });
    expect(credential.token).not.toBe(startCredential.token);
    expect(Date.parse(credential.expires_at) - Date.now()).toBeLessThanOrEqual(15 * 60 * 1000);
    const verified = await t.hub.keys.verifier.verify(credential.token, { audience: ['runtime'] });
    expect(verified.sub).toBe(agentId);
    expect(verified.claims).toMatchObject({
      workspace_id: owner.workspace.id,
      model: 'local/echo',
      authorization_source: 'hub_managed',
    });
    // A refresh is not a launch: the launch path stays with the start.
    expect(verified.claims).not.toHaveProperty('launch_path');
    const second = await refresh(agentToken);
    expect(second.response.status).toBe(200);
    expect(second.data!.data.token).not.toBe(credential.token);

    expect(await auditRows(t, ISSUED, agentId)).toHaveLength(1);
    const refreshed = await auditRows(t, REFRESHED, agentId);
    expect(refreshed).toHaveLength(2);
    expect(refreshed[0]).toMatchObject({
      workspaceId: owner.workspace.id,
      actorKind: 'agent',
      actorId: agentId,
      data: {
        credential_id: verified.claims.credential_id,
        provider: 'local',
        model: 'local/echo',
        authorization_source: 'hub_managed',
        expires_at: credential.expires_at,
      },
    });
    const stored = JSON.stringify(
      await t.database.prisma.auditEvent.findMany({ where: { targetId: agentId } }),
    );
    const logged = t.logs.join('\n');
    for (const secret of [credential.token, second.data!.data.token, agentToken]) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
    }
  });

  test('when the hub does not manage the provider and the workspace has its credential, then the refresh is authorized by the workspace provider and the audit says so', async () => {
    const owner = await t.seedMember('owner');
    await setWorkspaceCredential(owner.workspace.id, 'anthropic');
    const host = await t.seedHost(owner.workspace.id);
    const registered = await registerAgent(t, { token: owner.token }, owner.workspace.slug, {
      runtime_instance_id: host.id,
      model: 'anthropic/claude-sonnet-4-5',
    });
    const started = await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: registered.id } },
      body: { launch_path: 'relay' },
    });
    const res = await refresh(started.data!.data.agent_token);
    expect(res.response.status).toBe(200);
    expect(res.data!.data).toMatchObject({
      provider: 'anthropic',
      model: 'anthropic/claude-sonnet-4-5',
      authorization_source: 'workspace_provider',
    });
    const [event] = await auditRows(t, REFRESHED, registered.id);
    expect(event?.data).toMatchObject({ authorization_source: 'workspace_provider' });
    expect(JSON.stringify(event)).not.toContain(PROVIDER_SECRET);
    expect(JSON.stringify(res.data)).not.toContain(PROVIDER_SECRET);
  });

  test('when only server-local auth can authorize the provider, then the refresh uses it when the hub allows it and is refused otherwise', async () => {
    const owner = await t.seedMember('owner');
    const seeded = await t.seedAgent(owner.workspace.id, { model: 'google/gemini-2.5-pro' });
    const agent = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: seeded.id } });
    const allowed = await refreshRuntimeCredential(
      depsWith({ serverLocalProviderAuth: true }),
      agentActor(agent),
      'req-refresh',
    );
    expect(allowed).toMatchObject({ authorizationSource: 'server_local', model: 'google/gemini-2.5-pro' });
    const [event] = await auditRows(t, REFRESHED, agent.id);
    expect(event).toMatchObject({
      requestId: 'req-refresh',
      data: expect.objectContaining({ authorization_source: 'server_local' }),
    });

    const refused = await refresh(seeded.token);
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'provider_credential_unavailable', provider: 'google' });
    expect(await auditRows(t, REFRESHED, agent.id)).toHaveLength(1);
  });

  test('when the agent was stopped, then 409 agent_not_running and nothing is issued', async () => {
    const { owner, agentId, agentToken } = await startedAgent();
    const stopped = await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/stop', {
      params: { path: { agentId } },
    });
    expect(stopped.data?.data.status).toBe('offline');
    const res = await refresh(agentToken);
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: 'agent_not_running', current_status: 'offline' });
    expect(await auditRows(t, REFRESHED, agentId)).toHaveLength(0);
  });

  test('when the agent was evicted, then its token is refused (401) and the use case refuses it with 409 agent_evicted', async () => {
    const { owner, agentId, agentToken } = await startedAgent();
    const evicted = await t.client({ token: owner.token }).POST('/api/v1/agents/{agentId}/evict', {
      params: { path: { agentId } },
    });
    expect(evicted.data?.data.status).toBe('evicted');
    const res = await refresh(agentToken);
    expect(res.response.status).toBe(401);
    // A token checked just before the eviction committed reaches the use case, which reads the locked row.
    const agent = await t.database.prisma.agent.findUniqueOrThrow({ where: { id: agentId } });
    const error = await rejection(refreshRuntimeCredential(t.hub.deps, agentActor(agent)));
    expect(error).toMatchObject({ status: 409, code: 'agent_evicted' });
    expect(await auditRows(t, REFRESHED, agentId)).toHaveLength(0);
  });

  test('when the agent model has left the catalog, then 409 provider_model_unsupported with close matches, and nothing is issued', async () => {
    await t.database.prisma.providerModel.create({
      data: {
        id: 'local/echo-legacy',
        provider: 'local',
        model: 'echo-legacy',
        displayName: 'Echo (legacy)',
      },
    });
    const { agentId, agentToken } = await startedAgent('local/echo-legacy');
    expect((await refresh(agentToken)).response.status).toBe(200);
    await t.database.prisma.providerModel.update({
      where: { id: 'local/echo-legacy' },
      data: { active: false },
    });
    const res = await refresh(agentToken);
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: 'provider_model_unsupported', field: 'model' });
    const closeMatches = (res.error as unknown as { close_matches: string[] }).close_matches;
    expect(closeMatches).toContain('local/echo');
    expect(closeMatches).not.toContain('local/echo-legacy');
    expect(await auditRows(t, REFRESHED, agentId)).toHaveLength(1);
  });

  test('when a running agent has no model, then 409 model_required', async () => {
    const owner = await t.seedMember('owner');
    const seeded = await t.seedAgent(owner.workspace.id, { model: null });
    const res = await refresh(seeded.token);
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: 'model_required' });
  });

  test('when a participant or nobody calls it, then 403 and 401 (agents only)', async () => {
    const owner = await t.seedMember('owner');
    const res = await t.client({ token: owner.token }).POST('/api/v1/agents/me/runtime-credential');
    expect(res.response.status).toBe(403);
    const anonymous = await t.client().POST('/api/v1/agents/me/runtime-credential');
    expect(anonymous.response.status).toBe(401);
  });
});
