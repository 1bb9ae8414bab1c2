import { ALL_SCOPES } from '@svc/auth';
import { hubDocument, hubInternalDocument } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import {
  assertCredentialFactories,
  assertDeviations,
  caseTitle,
  casesByOperation,
  checkAccessCase,
  createMatrixCoverage,
  generateAccessMatrix,
} from '@svc/testing';
import type { CredentialFactories, KnownDeviation, MatrixTarget } from '@svc/testing';
import { createKey, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

/**
 * The unauthorized matrix of the hub, generated from `x-svc-actors` / `x-svc-scopes` of the public and internal
 * documents for every credential kind: no credential (401), a forged credential of each kind (401), an actor
 * kind the operation does not accept or a key missing a declared scope (403), a caller of another workspace
 * (403 for `{workspace}`, 404 for a resource addressed by id), another workspace's resource named inside the
 * caller's own path (404), and the anonymous operations answering whatever credential is sent. The hub reads no
 * relay token, and neither a console ticket nor a runtime credential is a credential of its API: each is
 * answered 401 `credential_invalid`.
 */
const OPTIONS = {
  unreadCredentials: ['relay_token'] as const,
  // Names, not resources of a workspace: a provider of the catalog, an environment's name.
  nameParams: ['provider', 'environment'],
};
const publicMatrix = generateAccessMatrix(hubDocument, OPTIONS);
const internalMatrix = generateAccessMatrix(hubInternalDocument, OPTIONS);
const publicCoverage = createMatrixCoverage(hubDocument, publicMatrix);
const internalCoverage = createMatrixCoverage(hubInternalDocument, internalMatrix);

/**
 * Where the hub answers otherwise than the contract today Each entry is checked against the answer given, so
 * a fix makes its case fail until the entry is removed.
 */
const DEVIATIONS: Record<string, KnownDeviation> = Object.fromEntries(
  (
    [
      // None today: resources addressed by id are checked before the body (decision 4; the guards of
      // decision 51 do it for the operations that take a body).
    ] as string[]
  ).map((id) => [
    id,
    {
      actual: { status: 400, code: 'validation_failed' },
      reason: 'the body is validated before the workspace of the resource is checked',
    },
  ]),
);

let t: TestHub;
let home: SeededMember;
let stranger: SeededMember;
const keys = new Map<string, Promise<string>>();
let agentToken: string;
let relayToken: string;
const foreign: Record<string, string> = {};
const own: Record<string, string> = {};

const credentials: CredentialFactories = {
  participant: () => home.token,
  api_key: (scopes) => {
    const id = [...scopes].sort().join(' ');
    if (!keys.has(id))
      keys.set(
        id,
        createKey(t, home, { scopes: [...scopes] }).then((k) => k.key),
      );
    return keys.get(id)!;
  },
  agent: () => agentToken,
  service: () => SERVICE_TOKEN,
  relay_token: () => relayToken,
  // A ticket lives 60 s: each case gets a fresh one, through the hub's own operation.
  console_ticket: async () =>
    (await post<{ ticket: string }>(home.token, `/api/v1/agents/${own.agentId}/console-tickets`, {})).ticket,
  // What a direct start hands an agent for its provider: audience `runtime`, signed by the hub's key.
  runtime_credential: () =>
    t.hub.deps.keys.issuer.issue({
      audience: 'runtime',
      subject: own.agentId!,
      ttlSeconds: 600,
      claims: { workspace_id: home.workspace.id, provider: 'local', model: 'local/echo' },
    }).token,
};

const target: MatrixTarget = {
  url: () => t.url,
  credentials,
  allScopes: ALL_SCOPES,
  params: () => ({ workspace: home.workspace.slug, environment: 'matrix-env', ...own }),
  foreignParams: () => foreign,
  bodies: {
    updateWorkspaceMember: { role: 'member' },
    putProjectSpawnPolicy: { enabled: false },
  },
};
const publicTarget: MatrixTarget = { ...target, coverage: publicCoverage };
const internalTarget: MatrixTarget = { ...target, coverage: internalCoverage };

async function post<T>(token: string, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`seeding ${path}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

beforeAll(async () => {
  t = await startTestHub();
  home = await t.seedMember('owner');
  stranger = await t.seedMember('owner');
  const homeAgent = await t.seedAgent(home.workspace.id);
  agentToken = homeAgent.token;
  relayToken = (await t.seedHost(home.workspace.id)).relayToken;
  // Resources of the callers' own workspace, so that a path naming one of them and one of the stranger's is
  // answered 404 for the stranger's, not for a missing one of ours.
  const homeWs = `/api/v1/workspaces/${home.workspace.slug}`;
  const homeProject = await post<{ id: string }>(home.token, `${homeWs}/projects`, {
    code: 'NEAR',
    name: 'Near',
  });
  const homeTeam = await post<{ id: string }>(home.token, `${homeWs}/teams`, { name: 'near' });
  Object.assign(own, {
    agentId: homeAgent.id,
    projectId: homeProject.id,
    project: homeProject.id,
    teamId: homeTeam.id,
  });

  // One resource of each kind in the stranger's workspace, addressed by id from the home workspace's callers.
  const ws = `/api/v1/workspaces/${stranger.workspace.slug}`;
  const agent = await t.seedAgent(stranger.workspace.id);
  const project = await post<{ id: string }>(stranger.token, `${ws}/projects`, { code: 'FAR', name: 'Far' });
  const handoff = await post<{ id: string }>(stranger.token, `${ws}/handoffs`, { title: 'far away' });
  const repo = await post<{ id: string }>(stranger.token, `${ws}/repos`, {
    name: 'far',
    url: 'https://github.com/example/far.git',
  });
  const team = await post<{ id: string }>(stranger.token, `${ws}/teams`, { name: 'far' });
  const message = await post<{ id: string }>(stranger.token, `/api/v1/agents/${agent.id}/messages`, {
    kind: 'ask',
    body: 'hello',
  });
  const key = await createKey(t, stranger, { preset: 'read-only' });
  const spawn = await t.database.prisma.agentSpawn.create({
    data: {
      id: newId('spn'),
      workspaceId: stranger.workspace.id,
      projectId: project.id,
      runtimeInstanceId: agent.runtimeInstanceId!,
      state: 'failed',
      origin: 'api',
      requestFingerprint: 'matrix',
      name: 'far-spawn',
      model: 'local/echo',
      capabilities: ['code'],
      commandKey: 'default',
      relayRequest: {},
      requestedBy: { kind: 'participant', id: stranger.participantId },
      authorization: { source: 'participant' },
      deadlineAt: new Date(),
      finishedAt: new Date(),
    },
  });
  Object.assign(foreign, {
    participantId: stranger.participantId,
    keyId: key.id,
    project: project.id,
    spawnId: spawn.id,
    workspace: stranger.workspace.slug,
    workspaceId: stranger.workspace.id,
    agentId: agent.id,
    hostId: agent.runtimeInstanceId!,
    projectId: project.id,
    handoffId: handoff.id,
    repoId: repo.id,
    teamId: team.id,
    messageId: message.id,
  });
});
afterAll(() => t.close());

describe('the generated matrix', () => {
  test('when the matrix is generated, then every actor kind it presents has a credential factory', () => {
    assertCredentialFactories(publicMatrix, credentials);
    assertCredentialFactories(internalMatrix, credentials);
  });

  test('when deviations are listed, then each names a generated case and differs from the contract', () => {
    const cases = [...publicMatrix.cases, ...internalMatrix.cases];
    assertDeviations({ ...publicMatrix, title: 'Hub', cases }, DEVIATIONS);
  });
});

describe.each([
  ...casesByOperation(publicMatrix).map(([name, cases]) => [name, cases, publicTarget] as const),
  ...casesByOperation(internalMatrix).map(([name, cases]) => [name, cases, internalTarget] as const),
])('%s', (_operation, cases, caseTarget) => {
  test.each(cases.map((c) => [caseTitle(c, DEVIATIONS), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, caseTarget, DEVIATIONS);
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then every operation of both documents was proven for every credential kind', () => {
  expect([...publicCoverage.missing(), ...internalCoverage.missing()]).toEqual([]);
});
