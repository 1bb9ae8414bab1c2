import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createSecretBox, parseSecretBoxKeys } from '@svc/service-kit';
import {
  createHubDatabase,
  createHubWorkspace,
  createWorkflowDatabase,
  eventually,
  jwtAttacks,
  newServiceToken,
  registerLiveRuntimeHost,
  sleep,
  startHub,
  startWorkflowApi,
  testRedisUrl,
  uniqueQueuePrefix,
  workflowEnv,
} from '@svc/testing';
import type { HubOwner, JwtAttack, NodeProcess, RunningHub, TestDatabase } from '@svc/testing';

/**
 * The Workflow API's credential checks from outside: the built hub and the built Workflow API as processes. Hostile
 * JWTs are built with the hub's real signing key (read from the hub's database and opened with its encryption
 * key), beside a genuine control built the same way; tokens of another kind; revoked and expired API keys, which
 * the Workflow API learns of through the hub (introspection, its cache bounded by the key's expiry, and the
 * revocation notice). Another workspace's key on every resource addressed by id is the access matrix's
 * `other_workspace` and `foreign_id` cases.
 */

jest.setTimeout(60_000);

const REDIS_URL = testRedisUrl();
const ENCRYPTION_KEYS = `k1:${randomBytes(32).toString('base64')}`;

let hubDb: TestDatabase;
let wfDb: TestDatabase;
let hub: RunningHub;
let api: NodeProcess;
let url: string;
let owner: HubOwner;
let rival: HubOwner;
let projectId: string;
let participant: { valid: string; attacks: JwtAttack[] };
let agent: { valid: string; attacks: JwtAttack[] };

async function call(path: string, headers: Record<string, string>, method = 'GET', body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as { code?: string; data?: unknown };
  return { status: res.status, code: json.code, data: json.data };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const approval = () => `/api/v1/projects/${projectId}/workflow/invocations/inv_0000/approval`;
const stages = '/api/v1/agents/me/workflow-stages';

/** The hub's active signing key, as the hub itself opens it. */
async function hubSigningKey(): Promise<{ kid: string; privateKeyPem: string }> {
  const client = new Client({ connectionString: hubDb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{ kid: string; private_key_ciphertext: string }>(
      'SELECT kid, private_key_ciphertext FROM signing_keys ORDER BY activated_at DESC LIMIT 1',
    );
    const row = rows[0]!;
    const box = createSecretBox(parseSecretBoxKeys(ENCRYPTION_KEYS));
    return { kid: row.kid, privateKeyPem: box.open(row.private_key_ciphertext, row.kid) };
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  const serviceToken = newServiceToken();
  const queuePrefix = uniqueQueuePrefix('svcs');
  [hubDb, wfDb] = await Promise.all([createHubDatabase(), createWorkflowDatabase()]);
  hub = await startHub({
    databaseUrl: hubDb.url,
    serviceToken,
    env: { HUB_ENCRYPTION_KEYS: ENCRYPTION_KEYS, HUB_REDIS_URL: REDIS_URL, HUB_REDIS_PREFIX: queuePrefix },
  });
  const wf = await workflowEnv({
    databaseUrl: wfDb.url,
    redisUrl: REDIS_URL,
    queuePrefix,
    hubUrl: hub.url,
    serviceToken,
  });
  url = wf.url;
  api = await startWorkflowApi(wf);
  const workspace = (slug: string) =>
    createHubWorkspace({ hubUrl: hub.url, databaseUrl: hubDb.url, slug, email: `owner@${slug}.test` });
  owner = await workspace('acme');
  rival = await workspace('rival');
  projectId = (await owner.createProject('SEC')).id;
  // The agent must exist on the hub: the Workflow API refuses tokens of evicted or deleted agents (decision 60).
  const host = await registerLiveRuntimeHost(owner, 'security-host');
  host.stop();
  const registered = await owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
    params: { path: { workspace: owner.workspace.slug } },
    body: { name: 'security', runtime_instance_id: host.id, capabilities: [], project_code: 'SEC' } as never,
  });
  const agentId =
    (registered.data!.data as { id?: string; agent?: { id: string } }).agent?.id ??
    (registered.data!.data as { id: string }).id;
  const signingKey = await hubSigningKey();
  const session = JSON.parse(Buffer.from(owner.token.split('.')[1]!, 'base64url').toString()) as {
    iss: string;
    sub: string;
    email: string;
  };
  participant = jwtAttacks({
    signingKey,
    issuer: session.iss,
    audience: 'participant',
    subject: session.sub,
    claims: { email: session.email },
    otherToken: rival.token,
  });
  agent = jwtAttacks({
    signingKey,
    issuer: session.iss,
    audience: 'agent',
    subject: agentId,
    claims: { workspace_id: owner.workspace.id, runtime_instance_id: host.id, agent_name: 'security' },
    otherToken: rival.token,
  });
});
afterAll(async () => {
  await api?.stop();
  await hub?.process.stop();
  await Promise.all([wfDb?.drop(), hubDb?.drop()]);
});

describe('hostile participant tokens on an approval', () => {
  test('when the genuine token is built the same way, then it passes access (404 for an unknown invocation)', async () => {
    expect(await call(approval(), bearer(participant.valid), 'POST', { decision: 'approve' })).toMatchObject({
      status: 404,
    });
  });

  test('when every hostile variant is sent, then each is 401 credential_invalid', async () => {
    for (const a of participant.attacks) {
      const res = await call(approval(), bearer(a.token), 'POST', { decision: 'approve' });
      // Here even a genuine agent-audience token is refused: it carries no workspace (an agent token always does).
      const expected = { status: 401, code: 'credential_invalid' };
      expect({ name: a.name, status: res.status, code: res.code }).toEqual({ name: a.name, ...expected });
    }
  });
});

describe('hostile agent tokens on the stage list', () => {
  test('when the genuine token is built the same way, then it is accepted', async () => {
    expect(await call(stages, bearer(agent.valid))).toMatchObject({ status: 200 });
  });

  test('when every hostile variant is sent, then each is 401 credential_invalid', async () => {
    for (const a of agent.attacks) {
      const res = await call(stages, bearer(a.token));
      const expected =
        a.name === 'audience participant'
          ? { status: 403, code: 'actor_not_allowed' }
          : { status: 401, code: 'credential_invalid' };
      expect({ name: a.name, status: res.status, code: res.code }).toEqual({ name: a.name, ...expected });
    }
  });
});

describe('credentials of another kind', () => {
  test('when a service token, a participant JWT in the key header or a key as a bearer token is sent, then 401 (never a 5xx)', async () => {
    const cases: [string, Record<string, string>][] = [
      [stages, { 'x-svc-service-token': newServiceToken() }],
      [`/api/v1/projects/${projectId}/workflow/contracts`, { 'x-api-key': owner.token }],
      [
        `/api/v1/projects/${projectId}/workflow/contracts`,
        bearer(await owner.createApiKey(['workflow-contracts:read'])),
      ],
    ];
    for (const [path, headers] of cases) {
      expect(await call(path, headers)).toMatchObject({ status: 401, code: 'credential_invalid' });
    }
  });
});

describe('API keys through the hub', () => {
  const contracts = () => `/api/v1/projects/${projectId}/workflow/contracts`;

  test('when a key is revoked at the hub, then the Workflow API refuses it within a second', async () => {
    const created = await owner.hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: owner.workspace.slug } },
      body: { name: 'to revoke', scopes: ['workflow-contracts:read'] },
    });
    const key = created.data!.data;
    expect((await call(contracts(), { 'x-api-key': key.key })).status).toBe(200);
    await owner.hub.DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
      params: { path: { workspace: owner.workspace.slug, keyId: key.id } },
    });
    await eventually(
      async () => (await call(contracts(), { 'x-api-key': key.key })).status === 401,
      1_000,
      'the revoked key refused',
    );
  });

  test('when a key reaches its expiry, then the Workflow API refuses it (the cached answer does not outlive it)', async () => {
    const created = await owner.hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: owner.workspace.slug } },
      body: {
        name: 'expiring',
        scopes: ['workflow-contracts:read'],
        expires_at: new Date(Date.now() + 2_000).toISOString(),
      },
    });
    const key = created.data!.data.key;
    expect((await call(contracts(), { 'x-api-key': key })).status).toBe(200);
    await sleep(2_100);
    expect(await call(contracts(), { 'x-api-key': key })).toMatchObject({
      status: 401,
      code: 'credential_invalid',
    });
  });

  test("when another workspace's key is sent for this project, then 404 and no data", async () => {
    const key = await rival.createApiKey(['workflow-contracts:read']);
    const res = await call(contracts(), { 'x-api-key': key });
    expect(res).toMatchObject({ status: 404, data: undefined });
  });
});
