import { ALL_SCOPES } from '@svc/auth';
import { hubDocument, hubInternalDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import {
  assertCredentialFactories,
  assertDeviations,
  caseTitle,
  casesByOperation,
  checkAccessCase,
  generateAccessMatrix,
} from '@svc/testing';
import type { CredentialFactories, KnownDeviation, MatrixTarget } from '@svc/testing';
import { createKey, SERVICE_TOKEN, startTestHub } from './harness';
import type { SeededMember, TestHub } from './harness';

/**
 * The unauthorized matrix of the hub, generated from `x-svc-actors` / `x-svc-scopes` of the public and internal
 * documents for every actor kind: no credential (401), an actor kind the operation does not accept or a key
 * missing a declared scope (403), a caller of another workspace (403 for `{workspace}`, 404 for a resource
 * addressed by id). The hub reads no relay token, so one is answered 401 `credential_invalid`.
 */
const OPTIONS = { unreadCredentials: ['relay_token'] as const };
const publicMatrix = generateAccessMatrix(hubDocument, OPTIONS);
const internalMatrix = generateAccessMatrix(hubInternalDocument, OPTIONS);

/**
 * Where the hub answers otherwise than the contract today Each entry is checked against the answer given, so
 * a fix makes its case fail until the entry is removed.
 */
const DEVIATIONS: Record<string, KnownDeviation> = Object.fromEntries(
  [
    // Operations on a resource addressed by id check the resource's workspace in the handler, after the body
    // is validated, so another workspace's caller sending an invalid body learns what a valid one looks like
    // (decision 4 puts access before the body).
    'blockHandoff other_workspace agent',
    'submitHandoffEvidence other_workspace agent',
    'setRepoCredential other_workspace participant',
    'sendAgentMessage other_workspace participant',
    'sendAgentMessage other_workspace api_key',
    'sendAgentMessage other_workspace agent',
    'recordRuntimeHostHeartbeat other_workspace api_key',
    'assignProjectTeam other_workspace participant',
    'assignProjectTeam other_workspace api_key',
    'startAgent other_workspace participant',
    'startAgent other_workspace api_key',
  ].map((id) => [
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
};

const target: MatrixTarget = {
  url: () => t.url,
  credentials,
  allScopes: ALL_SCOPES,
  params: () => ({ workspace: home.workspace.slug, environment: 'matrix-env' }),
  foreignParams: () => foreign,
};

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
  agentToken = (await t.seedAgent(home.workspace.id)).token;
  relayToken = (await t.seedHost(home.workspace.id)).relayToken;

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
  Object.assign(foreign, {
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
  test('when the hub documents are read, then the matrix covers exactly the operations the router mounts', () => {
    for (const [doc, matrix] of [
      [hubDocument, publicMatrix],
      [hubInternalDocument, internalMatrix],
    ] as const) {
      const mounted = listOperations(doc).filter((op) => !op.actors.includes('anonymous'));
      expect(matrix.protected.map((op) => [op.operationId, op.actors, op.scopes])).toEqual(
        mounted.map((op) => [op.operationId, op.actors, op.scopes]),
      );
    }
  });

  test('when the matrix is generated, then every actor kind it presents has a credential factory', () => {
    assertCredentialFactories(publicMatrix, credentials);
    assertCredentialFactories(internalMatrix, credentials);
  });

  test('when deviations are listed, then each names a generated case and differs from the contract', () => {
    const cases = [...publicMatrix.cases, ...internalMatrix.cases];
    assertDeviations({ ...publicMatrix, title: 'Hub', cases }, DEVIATIONS);
  });
});

describe.each([...casesByOperation(publicMatrix), ...casesByOperation(internalMatrix)])(
  '%s',
  (_operation, cases) => {
    test.each(cases.map((c) => [caseTitle(c, DEVIATIONS), c] as const))('%s', async (_name, c) => {
      const { expected, actual } = await checkAccessCase(c, target, DEVIATIONS);
      expect(actual).toEqual(expected);
    });
  },
);
