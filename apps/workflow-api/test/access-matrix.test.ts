import { randomBytes } from 'node:crypto';
import { ALL_SCOPES } from '@svc/auth';
import { workflowDocument, workflowWorkerDocument } from '@svc/contracts';
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
import { startWorkflowTestStack } from './stack';
import type { WorkflowTestStack } from './stack';

/**
 * The unauthorized matrix of the Workflow API, generated from `x-svc-actors` / `x-svc-scopes` of its document for
 * every actor kind: no credential (401), an actor kind the operation does not accept or a key missing a declared
 * scope (403), a caller of another workspace (403 for `{workspaceId}`, 404 for another workspace's project or
 * stage). The Workflow API reads API keys and the hub's bearer tokens only: a service or relay token is answered
 * 401 `credential_invalid`.
 */
const matrix = generateAccessMatrix(workflowDocument, { unreadCredentials: ['service', 'relay_token'] });
const workerMatrix = generateAccessMatrix(workflowWorkerDocument);

/**
 * Where the Workflow API answers otherwise than the contract today. Each entry is checked against the answer
 * given, so a fix makes its case fail until the entry is removed.
 */
const DEVIATIONS: Record<string, KnownDeviation> = Object.fromEntries(
  [
    // Stage actions check the stage's workspace in the handler, after the body is validated, so another
    // workspace's agent sending an invalid body learns what a valid one looks like (decision 4 puts access
    // before the body).
    'reportWorkflowStageBlocker other_workspace agent',
    'submitWorkflowStageEvidence other_workspace agent',
    'failWorkflowStage other_workspace agent',
  ].map((id) => [
    id,
    {
      actual: { status: 400, code: 'validation_failed' },
      reason: 'the body is validated before the workspace of the stage is checked',
    },
  ]),
);

let s: WorkflowTestStack;
const keys = new Map<string, Promise<string>>();
let agentToken: string;
let relayToken: string;

const credentials: CredentialFactories = {
  participant: () => s.adminToken,
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
};

const target: MatrixTarget = {
  url: () => s.url,
  credentials,
  allScopes: ALL_SCOPES,
  params: () => ({ workspaceId: s.workspace.id, projectId: s.project.id }),
  foreignParams: () => ({
    workspaceId: s.otherProject.workspaceId,
    projectId: s.otherProject.id,
    // Stages exist only inside a running workflow, which this stack does not run. The Workflow API answers a
    // stage of another workspace exactly like a missing one (one check in the stage ownership rule), so a
    // well-formed unknown stage id stands for it.
    stageId: 'stg_otherworkspace0000',
  }),
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

beforeAll(async () => {
  s = await startWorkflowTestStack();
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
  const started = await hub<{ agent_token: string }>(
    'POST',
    `/api/v1/agents/${agent.id}/start`,
    { launch_path: 'direct' },
    owner,
  );
  agentToken = started.agent_token;
}, 90_000);
afterAll(() => s.close());

describe('the generated matrix', () => {
  test('when the Workflow API document is read, then the matrix covers exactly the operations the router mounts', () => {
    const mounted = listOperations(workflowDocument).filter((op) => !op.actors.includes('anonymous'));
    expect(matrix.protected.map((op) => [op.operationId, op.actors, op.scopes])).toEqual(
      mounted.map((op) => [op.operationId, op.actors, op.scopes]),
    );
  });

  test('when the matrix is generated, then every actor kind it presents has a credential factory', () => {
    assertCredentialFactories(matrix, credentials);
  });

  test('when deviations are listed, then each names a generated case and differs from the contract', () => {
    assertDeviations(matrix, DEVIATIONS);
  });

  test('when the worker document is read, then it has no protected operation yet (a new one needs its matrix run here)', () => {
    expect(workerMatrix.anonymous.length).toBeGreaterThan(0);
    expect(workerMatrix.protected.map((op) => op.operationId)).toEqual([]);
  });
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c, DEVIATIONS), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, target, DEVIATIONS);
    expect(actual).toEqual(expected);
  });
});
