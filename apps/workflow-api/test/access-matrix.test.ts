import { randomBytes } from 'node:crypto';
import { ALL_SCOPES } from '@svc/auth';
import { workflowDocument } from '@svc/contracts';
import { createSecretBox, newId, parseSecretBoxKeys } from '@svc/service-kit';
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
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * The unauthorized matrix of the Workflow API, generated from `x-svc-actors` / `x-svc-scopes` of its document for
 * every credential kind: no credential (401), a forged credential of each kind (401), an actor kind the operation
 * does not accept or a key missing a declared scope (403), a caller of another workspace (403 for
 * `{workspaceId}`, 404 for another workspace's project or stage), another workspace's resource named inside the
 * caller's own path (404), and the anonymous operations answering whatever credential is sent. The Workflow API
 * reads API keys and the hub's participant and agent tokens only: a service or relay token, a console ticket and
 * a runtime credential are answered 401 `credential_invalid`. The worker's document is run by
 * `access-matrix-worker.test.ts`. Members of the callers' workspace in each role an operation leaves out
 * (`x-svc-participant-roles`) are refused with 403 `role_forbidden`.
 */
const matrix = generateAccessMatrix(workflowDocument, {
  unreadCredentials: ['service', 'relay_token'],
  // A participant in a role the operation leaves out (decisions 58 and 90); the approval and the assistance
  // settings answer their own, more specific codes.
  roleCases: true,
  roleCodes: {
    decideInvocationApproval: 'approval_role_required',
    updateAssistanceSettings: 'assistance_role_required',
  },
});
const coverage = createMatrixCoverage(workflowDocument, matrix);

/**
 * Where the Workflow API answers otherwise than the contract today. Each entry is checked against the answer
 * given, so a fix makes its case fail until the entry is removed.
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
      reason: 'the body is validated before the workspace of the stage is checked',
    },
  ]),
);

let s: WorkflowTestStack;
const keys = new Map<string, Promise<string>>();
const members = new Map<string, Promise<string>>();
let agentToken: string;
let relayToken: string;
let runtimeCredential: string;
let agentId: string;
/** Resources of the other workspace, addressed by id from this workspace's callers. */
const far: Record<string, string> = {};
/** Resources of the callers' own workspace named beside a far one (`/projects/{ours}/…/{theirs}`). */
const near: Record<string, string> = {};

const credentials: CredentialFactories = {
  participant: () => s.adminToken,
  participant_role: (role) => {
    if (!members.has(role)) members.set(role, signedInMember(role));
    return members.get(role)!;
  },
  api_key: (scopes) => {
    const id = [...scopes].sort().join(' ');
    if (!keys.has(id)) keys.set(id, s.key([...scopes]));
    return keys.get(id)!;
  },
  agent: () => agentToken,
  // The stack keeps the hub's service token to itself; the Workflow API reads no service token, so a
  // well-formed one stands for it.
  service: () => `svs_${randomBytes(32).toString('base64url')}`,
  relay_token: () => relayToken,
  console_ticket: async () =>
    (
      await hub<{ ticket: string }>(
        'POST',
        `/api/v1/agents/${agentId}/console-tickets`,
        {},
        {
          authorization: `Bearer ${s.adminToken}`,
        },
      )
    ).ticket,
  runtime_credential: () => runtimeCredential,
};

const target: MatrixTarget = {
  url: () => s.url,
  credentials,
  allScopes: ALL_SCOPES,
  params: () => ({ workspaceId: s.workspace.id, projectId: s.project.id, ...near }),
  foreignParams: () => ({
    workspaceId: s.otherProject.workspaceId,
    projectId: s.otherProject.id,
    ...far,
  }),
  bodies: {
    validateArtifactPayload: { payload: {} },
    updateWorkflowContract: { name: 'mine now' },
    updateDeliverySubscription: { is_active: false },
    decideInvocationApproval: { decision: 'approve' },
    updateAssistanceSettings: { enabled: false },
    publishInvocationArtifact: { payload: {} },
  },
  coverage,
};

async function hub<T>(method: string, path: string, body: unknown, auth: Record<string, string>): Promise<T> {
  const res = await fetch(`${s.hubUrl}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...auth },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`seeding ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: T }).data;
}

/** A new account added to the callers' workspace with `role`, signed in: its participant token. */
async function signedInMember(role: string): Promise<string> {
  const email = `${role}-${randomBytes(3).toString('hex')}@example.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await hub(
    'POST',
    `/api/v1/workspaces/${s.workspace.slug}/members`,
    { email, role, password },
    {
      authorization: `Bearer ${s.adminToken}`,
    },
  );
  return (await hub<{ token: string }>('POST', '/api/v1/auth/login', { email, password }, {})).token;
}

beforeAll(async () => {
  // Signing secrets are configured, so rotating one reaches the subscription lookup.
  const secrets = createSecretBox(parseSecretBoxKeys(`k1:${randomBytes(32).toString('base64')}`));
  s = await startWorkflowTestStack({ delivery: { secrets } });
  // An agent of the home workspace, started through the hub's public API: its AGENT_TOKEN is what the Workflow
  // API verifies against the hub's JWKS. The host it runs on gives the relay token.
  const owner = { authorization: `Bearer ${s.adminToken}` };
  const ws = `/api/v1/workspaces/${s.workspace.slug}`;
  await hub(
    'PUT',
    `${ws}/provider-credentials/local`,
    { secret: `local-${randomBytes(12).toString('hex')}` },
    owner,
  );
  const host = await hub<{ host: { id: string }; relay_token: string }>(
    'POST',
    `${ws}/runtime-hosts`,
    {
      name: 'matrix-host',
      hostname: 'runtime-1.internal',
      workdir_root: '/srv/agents',
      console_public_base_url: 'https://console.example.test',
      relay_public_url: 'https://relay.example.test',
    },
    owner,
  );
  relayToken = host.relay_token;
  await hub(
    'POST',
    `/api/v1/runtime-hosts/${host.host.id}/heartbeat`,
    { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
    { 'x-api-key': await s.key(['runtime-hosts:write']) },
  );
  const agent = await hub<{ id: string }>(
    'POST',
    `${ws}/agents`,
    {
      name: 'matrix-agent',
      runtime_instance_id: host.host.id,
      capabilities: ['code'],
      project_code: s.project.code,
      model: 'local/echo',
    },
    owner,
  );
  const started = await hub<{ agent_token: string; runtime_credential: { token: string } }>(
    'POST',
    `/api/v1/agents/${agent.id}/start`,
    { launch_path: 'direct' },
    owner,
  );
  agentToken = started.agent_token;
  runtimeCredential = started.runtime_credential.token;
  agentId = agent.id;
  await seedFarResources();
}, 90_000);

/**
 * One resource of each kind the Workflow API addresses by id, in the other workspace's project, written into the
 * Workflow API's database (finished, so no engine job picks them up).
 */
async function seedFarResources(): Promise<void> {
  const prisma = s.database.prisma;
  const workspaceId = s.otherProject.workspaceId;
  const projectId = s.otherProject.id;
  const schema = await prisma.artifactSchema.create({
    data: {
      id: newId('asc'),
      workspaceId,
      projectId,
      name: 'far-report',
      version: '1.0.0',
      jsonSchema: { type: 'object' },
      schemaHash: 'far',
    },
  });
  const contract = await prisma.workflowContract.create({
    data: {
      id: newId('wfc'),
      workspaceId,
      projectId,
      name: 'Far',
      priority: 10,
      classifier: { intentContains: ['far'], requiredCapabilities: [], metadata: {} },
      templateKey: 'far-flow',
      templateVersion: '1.0.0',
    },
  });
  const subscription = await prisma.deliverySubscription.create({
    data: {
      id: newId('wds'),
      workspaceId,
      projectId,
      url: 'https://far.example.test/hook',
      events: ['invocation.completed'],
      secretSealed: 'sealed',
    },
  });
  const invocation = await prisma.invocation.create({
    data: {
      id: newId('inv'),
      workspaceId,
      projectId,
      idempotencyKey: 'far',
      fingerprint: 'far',
      request: { intent: 'far' },
      intent: 'far',
      state: 'completed',
      createdByKind: 'api_key',
      keyExpiresAt: new Date(Date.now() + 86_400_000),
    },
  });
  const run = await prisma.workflowRun.create({
    data: { id: newId('run'), invocationId: invocation.id, workspaceId, projectId, state: 'completed' },
  });
  const stage = await prisma.runStage.create({
    data: {
      id: newId('stg'),
      runId: run.id,
      invocationId: invocation.id,
      workspaceId,
      position: 0,
      key: 'far',
      title: 'Far',
      state: 'completed',
    },
  });
  const delivery = await prisma.delivery.create({
    data: {
      id: newId('dlv'),
      subscriptionId: subscription.id,
      workspaceId,
      projectId,
      invocationId: invocation.id,
      event: 'invocation.completed',
      body: '{}',
      status: 'delivered',
    },
  });
  Object.assign(far, {
    schemaId: schema.id,
    contractId: contract.id,
    subscriptionId: subscription.id,
    invocationId: invocation.id,
    stageId: stage.id,
    deliveryId: delivery.id,
  });
}
afterAll(() => s.close());

describe('the generated matrix', () => {
  test('when the matrix is generated, then every actor kind it presents has a credential factory', () => {
    assertCredentialFactories(matrix, credentials);
  });

  test('when deviations are listed, then each names a generated case and differs from the contract', () => {
    assertDeviations(matrix, DEVIATIONS);
  });
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c, DEVIATIONS), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, target, DEVIATIONS);
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then every operation of the document was proven for every credential kind', () => {
  expect(coverage.missing()).toEqual([]);
});
