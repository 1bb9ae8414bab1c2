import { fc, test } from '@fast-check/jest';
import { HUB_SCOPES } from '@svc/auth';
import { hubDocument, unwrap } from '@svc/contracts';
import {
  checkAnswer,
  checkBodyRefusals,
  checkUnsupportedMethods,
  createHubDatabase,
  createHubWorkspace,
  describeExchange,
  documentValidator,
  fuzzSettings,
  newServiceToken,
  orderForFuzz,
  planOperations,
  recordAnswer,
  reportOrThrow,
  registerLiveRuntimeHost,
  registerStartedAgent,
  sendRequest,
  startHub,
} from '@svc/testing';
import type { FuzzTarget, LiveRuntimeHost, RunningHub, TestDatabase } from '@svc/testing';
import { HUB_FUZZ_EXEMPTIONS } from './support/fuzz-exemptions';

/**
 * The hub's public document is the truth: for every operation, requests drawn from its schemas (fast-check
 * arbitraries derived from the document) go to the built hub as a process, as every actor the operation
 * accepts, against seeded fixtures. Positive requests must not be refused except by a rule the operation
 * names; negative ones (broken in one place) must get 400; every answer must have a documented status, a
 * body valid against the documented schema, a problem `code` the operation names, and never a 5xx.
 * `SVC_FUZZ_RUNS` draws more requests per phase and operation, `SVC_FUZZ_SEED` replays a run.
 */

const settings = fuzzSettings();
if (settings.seed !== undefined) fc.configureGlobal({ seed: settings.seed });
const ACTORS = ['anonymous', 'participant', 'api_key', 'agent'] as const;

/** Operations that end a fixture or a credential the others use: they run last. */
const ENDING = new Set([
  'removeWorkspaceMember',
  'updateWorkspaceMember',
  'revokeApiKey',
  'deleteAgent',
  'evictAgent',
  'stopAgent',
  'stopAgentSelf',
  'refreshAgentToken',
  'rotateRelayToken',
]);

const plans = orderForFuzz(planOperations(hubDocument, ACTORS), (p) => ENDING.has(p.operation.operationId));
const validator = documentValidator(hubDocument);
const target: FuzzTarget = { baseUrl: '', credentials: {}, fixtures: {}, exemptions: HUB_FUZZ_EXEMPTIONS };
let hubDb: TestDatabase;
let hub: RunningHub;
let host: LiveRuntimeHost | undefined;

async function post<T>(path: string, token: string, body: unknown): Promise<T> {
  const res = await fetch(`${hub.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: T };
  if (!res.ok) throw new Error(`seeding POST ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

beforeAll(async () => {
  hubDb = await createHubDatabase();
  hub = await startHub({
    databaseUrl: hubDb.url,
    serviceToken: newServiceToken(),
    env: { HUB_MANAGED_PROVIDERS: 'local' },
  });
  const owner = await createHubWorkspace({
    hubUrl: hub.url,
    databaseUrl: hubDb.url,
    slug: 'fuzz',
    email: 'owner@fuzz.test',
  });
  const ws = owner.workspace.slug;
  const project = await owner.createProject('FUZZ', 'Fuzz');
  const apiKey = await owner.createApiKey([...HUB_SCOPES], 'fuzz all scopes');
  const victimKey = unwrap(
    await owner.hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: ws } },
      body: { name: 'fuzz victim', scopes: ['projects:read'] },
    }),
  );
  const member = await post<{ participant: { id: string } }>(
    `/api/v1/workspaces/${ws}/members`,
    owner.token,
    {
      email: 'member@fuzz.test',
      role: 'member',
      password: 'member-password-1234',
    },
  );
  host = await registerLiveRuntimeHost(owner, 'fuzz-host');
  const agent = await registerStartedAgent(owner, {
    name: 'fuzz-agent',
    hostId: host.id,
    projectCode: project.code,
    capabilities: ['code'],
  });
  const victim = await registerStartedAgent(owner, {
    name: 'fuzz-victim',
    hostId: host.id,
    projectCode: project.code,
    capabilities: ['code'],
  });
  const team = await post<{ id: string }>(`/api/v1/workspaces/${ws}/teams`, owner.token, { name: 'Fuzzers' });
  const handoff = await post<{ id: string }>(`/api/v1/workspaces/${ws}/handoffs`, owner.token, {
    title: 'Fuzz handoff',
    project_id: project.id,
    assignee_agent_id: agent.id,
  });
  const repo = await post<{ id: string }>(`/api/v1/workspaces/${ws}/repos`, owner.token, {
    name: 'fuzz-repo',
    url: 'https://git.example.test/fuzz/repo.git',
  });
  const message = await post<{ id: string }>(`/api/v1/agents/${agent.id}/messages`, owner.token, {
    kind: 'ask',
    body: 'fuzz message',
  });
  Object.assign(target, {
    baseUrl: hub.url,
    credentials: {
      anonymous: {},
      participant: { authorization: `Bearer ${owner.token}` },
      api_key: { 'x-api-key': apiKey },
      agent: { authorization: `Bearer ${agent.token}` },
    },
    fixtures: {
      workspace: [ws],
      project: [project.code, project.id],
      projectId: [project.id],
      participantId: [member.participant.id],
      keyId: [victimKey.id],
      hostId: [host.id],
      agentId: [victim.id, agent.id],
      teamId: [team.id],
      handoffId: [handoff.id],
      repoId: [repo.id],
      messageId: [message.id],
      environment: ['production', 'staging'],
      provider: ['anthropic', 'openai'],
    },
  });
}, 120_000);

afterAll(async () => {
  host?.stop();
  await hub?.process.stop();
  await hubDb?.drop();
});

test('every path answers a method it lacks with 405 and an Allow listing its methods', async () => {
  expect(await checkUnsupportedMethods(hubDocument, target)).toEqual([]);
});

test('every operation with a JSON body answers 415 to another media type and 413 over the limit, both documented', async () => {
  expect(await checkBodyRefusals(hubDocument, target)).toEqual([]);
});

describe.each(plans.map((p) => [p.operation.operationId, p] as const))('%s', (_id, plan) => {
  const run = async (req: Parameters<typeof sendRequest>[2]) => {
    const answer = await sendRequest(target, plan.operation, req);
    recordAnswer(plan.operation.operationId, req.phase, answer);
    const findings = checkAnswer(hubDocument, target, plan.operation, req, answer, validator);
    if (findings.length > 0)
      reportOrThrow(plan.operation.operationId, describeExchange(req, answer, findings));
  };
  test.prop([plan.positive], { numRuns: settings.numRuns, endOnFailure: true })('positive', run, 60_000);
  if (plan.negative) {
    test.prop([plan.negative], { numRuns: settings.numRuns, endOnFailure: true })('negative', run, 60_000);
  }
});
