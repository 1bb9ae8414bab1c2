/**
 * Model assistance for resolve (decision 48) against a local OpenAI-compatible fake started here: off by
 * default, never asked when a contract matches, a suggestion with its reason (audited, budget consumed), typed
 * failures (invalid answer, timeout, provider down), the budget under 50 concurrent resolves, what the fake
 * receives (no secret of the intent, the workspace credential as the bearer), and assisted routing of
 * invocations (refused unless allowed, recorded when it is).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { unwrap } from '@svc/contracts';
import { newProject, seedContract } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

type Mode = 'suggest' | 'none' | 'invalid' | 'foreign_id' | 'not_json' | 'slow' | 'error';

interface Received {
  url: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: {
    model: string;
    messages: { role: string; content: string }[];
    response_format: { type: string; json_schema: { schema: unknown } };
  };
}

/** An OpenAI-compatible chat-completions server that answers as `mode` says and keeps every request. */
class FakeModel {
  mode: Mode = 'suggest';
  /** In `suggest` mode, the offered contract whose name is this one is chosen. */
  pick = '';
  received: Received[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => {
        const body = JSON.parse(raw) as Received['body'];
        this.received.push({ url: req.url ?? '', headers: req.headers, raw, body });
        const offered = JSON.parse(body.messages.find((m) => m.role === 'user')?.content ?? '{}') as {
          contracts: { contract_id: string; name: string }[];
        };
        const answer = (content: string) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              id: 'cmpl-1',
              object: 'chat.completion',
              model: body.model,
              choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 },
            }),
          );
        };
        switch (this.mode) {
          case 'suggest': {
            const chosen = offered.contracts.find((c) => c.name === this.pick) ?? offered.contracts[0];
            answer(
              JSON.stringify({ contract_id: chosen?.contract_id ?? null, reason: 'It is about reports.' }),
            );
            return;
          }
          case 'none':
            answer(JSON.stringify({ contract_id: null, reason: 'Nothing fits.' }));
            return;
          case 'invalid':
            answer(JSON.stringify({ contract: 'Reports', confidence: 0.9 }));
            return;
          case 'foreign_id':
            answer(JSON.stringify({ contract_id: 'wfc_invented', reason: 'Made up.' }));
            return;
          case 'not_json':
            answer('I think the Reports contract fits best.');
            return;
          case 'slow':
            setTimeout(() => answer(JSON.stringify({ contract_id: null, reason: 'late' })), 1500);
            return;
          case 'error':
            res.writeHead(503, { 'content-type': 'application/json' });
            res.end('{"error":{"message":"overloaded"}}');
            return;
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let s: WorkflowTestStack;
let readKey: string;
let runKey: string;
const fake = new FakeModel();
const providerSecret = `sk-fake${randomBytes(16).toString('hex')}`;

type Assistance = {
  model_assisted: boolean;
  trigger: string;
  outcome: string;
  detail: string;
  provider: string;
  model: string;
  suggestion: { contract_id: string; name: string; reason: string } | null;
  contracts_offered: number;
  latency_ms: number | null;
  tokens_in: number;
  tokens_out: number;
  budget_warning: boolean;
  routing?: string;
};
type Resolved = {
  matched: boolean;
  contract: { contract_id: string } | null;
  explanation: { assistance?: Assistance };
};

beforeAll(async () => {
  s = await startWorkflowTestStack();
  await fake.start();
  [readKey, runKey] = await Promise.all([
    s.key(['workflow-contracts:read']),
    s.key(['workflows:run', 'workflows:read']),
  ]);
  unwrap(
    await s.hub.PUT('/api/v1/workspaces/{workspace}/provider-credentials/{provider}', {
      params: { path: { workspace: s.workspace.slug, provider: 'openai' } },
      body: { secret: providerSecret },
    }),
  );
}, 90_000);

afterAll(async () => {
  await fake.stop();
  await s?.close();
});

beforeEach(() => {
  fake.mode = 'suggest';
  fake.pick = '';
  fake.received = [];
});

async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as { code?: string; data: never } };
}

/** The workspace owner's participant token (the only actor that may change settings). */
const owner = () => ({ authorization: `Bearer ${s.adminToken}` });

const settingsPath = (projectId: string) => `/api/v1/projects/${projectId}/workflow/assistance`;

async function configure(projectId: string, patch: Record<string, unknown>) {
  const res = await call('PATCH', settingsPath(projectId), patch, owner());
  expect(res.status).toBe(200);
  return res.body.data as { enabled: boolean; revision: number };
}

const turnOn = (projectId: string, extra: Record<string, unknown> = {}) =>
  configure(projectId, {
    enabled: true,
    provider: 'openai',
    model: 'gpt-4.1',
    base_url: fake.url,
    timeout_ms: 2000,
    ...extra,
  });

async function resolve(projectId: string, intent: string, extra: Record<string, unknown> = {}) {
  const res = await call(
    'POST',
    `/api/v1/projects/${projectId}/workflow/resolve-intent`,
    { intent, ...extra },
    { 'x-api-key': readKey },
  );
  expect(res.status).toBe(200);
  return res.body.data as Resolved;
}

async function budget(projectId: string) {
  const res = await call('GET', `${settingsPath(projectId)}/budget`, undefined, { 'x-api-key': readKey });
  expect(res.status).toBe(200);
  return res.body.data as {
    warning: boolean;
    exhausted: boolean;
    warning_percent: number;
    day: {
      calls_used: number;
      calls_limit: number;
      tokens_used: number;
      warning: boolean;
      exhausted: boolean;
    };
    month: { calls_used: number; tokens_used: number };
  };
}

async function calls(projectId: string) {
  const res = await call('GET', `${settingsPath(projectId)}/calls`, undefined, { 'x-api-key': readKey });
  expect(res.status).toBe(200);
  return res.body.data as {
    outcome: string;
    actor_kind: string;
    model: string;
    tokens_in: number;
    tokens_out: number;
    latency_ms: number | null;
    suggestion: { contract_id: string } | null;
    prompt_sha256: string;
    prompt: string | null;
  }[];
}

/** A project with two contracts whose phrases the test intents never contain. */
async function projectWithContracts() {
  const project = await newProject(s);
  const reports = await seedContract(s, project.id, { name: 'Reports', intentContains: ['weekly report'] });
  const deploys = await seedContract(s, project.id, {
    name: 'Deploys',
    intentContains: ['deploy service'],
    templateKey: 'deploy-flow',
  });
  return { project, reports, deploys };
}

test('off by default: no settings, no call, no budget used, resolve unchanged', async () => {
  const { project } = await projectWithContracts();
  const settings = await call('GET', settingsPath(project.id), undefined, { 'x-api-key': readKey });
  expect(settings.status).toBe(200);
  expect(settings.body.data).toMatchObject({ enabled: false, allow_assisted_routing: false, revision: 0 });
  const result = await resolve(project.id, 'summarize the quarterly numbers');
  expect(result.matched).toBe(false);
  expect(result.explanation.assistance).toBeUndefined();
  expect(fake.received).toHaveLength(0);
  expect((await budget(project.id)).day.calls_used).toBe(0);
  expect(await calls(project.id)).toHaveLength(0);
});

test('settings: owner or admin participants only, refused when unusable, audited', async () => {
  const { project } = await projectWithContracts();
  const byKey = await call('PATCH', settingsPath(project.id), { enabled: false }, { 'x-api-key': readKey });
  expect([401, 403]).toContain(byKey.status);
  const noProvider = await call('PATCH', settingsPath(project.id), { enabled: true }, owner());
  expect(noProvider.status).toBe(400);
  expect(noProvider.body.code).toBe('assistance_provider_required');
  const remote = await call(
    'PATCH',
    settingsPath(project.id),
    { enabled: true, provider: 'openai', model: 'gpt-4.1', base_url: 'https://models.example.com/v1' },
    owner(),
  );
  expect(remote.status).toBe(400);
  expect(remote.body.code).toBe('assistance_data_policy_refused');
  const withCredentials = await call(
    'PATCH',
    settingsPath(project.id),
    { base_url: 'http://user:pw@127.0.0.1:1/v1' },
    owner(),
  );
  expect(withCredentials.status).toBe(400);
  expect(withCredentials.body.code).toBe('assistance_base_url_invalid');
  // A remote provider is accepted once the project lets data leave the workspace.
  const allowed = await configure(project.id, {
    enabled: true,
    provider: 'openai',
    model: 'gpt-4.1',
    base_url: 'https://models.example.com/v1',
    data_may_leave_workspace: true,
  });
  expect(allowed).toMatchObject({ enabled: true, revision: 1 });
  const events = await s.database.prisma.auditEvent.findMany({
    where: { projectId: project.id, action: 'assistance.settings_changed' },
  });
  expect(events).toHaveLength(1);
  expect(events[0]!.actorKind).toBe('participant');
  expect(events[0]!.data).toMatchObject({ before: { enabled: false }, after: { enabled: true } });
});

/** A participant of the workspace with this role, signed in. */
async function memberToken(role: 'admin' | 'member') {
  const email = `${role}-${randomBytes(4).toString('hex')}@acme.test`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/members', {
      params: { path: { workspace: s.workspace.slug } },
      body: { email, role, password },
    }),
  );
  const res = await fetch(`${s.hubUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: { token: string } }).data.token;
}

test('settings: a member may not change them, an admin may', async () => {
  const { project } = await projectWithContracts();
  const [member, admin] = await Promise.all([memberToken('member'), memberToken('admin')]);
  const refused = await call(
    'PATCH',
    settingsPath(project.id),
    { store_prompts: true },
    {
      authorization: `Bearer ${member}`,
    },
  );
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('assistance_role_required');
  const changed = await call(
    'PATCH',
    settingsPath(project.id),
    { store_prompts: true },
    {
      authorization: `Bearer ${admin}`,
    },
  );
  expect(changed.status).toBe(200);
  expect(changed.body.data).toMatchObject({ store_prompts: true, enabled: false, revision: 1 });
  // A change that changes nothing is not a new revision and not audited again.
  const same = await call(
    'PATCH',
    settingsPath(project.id),
    { store_prompts: true },
    {
      authorization: `Bearer ${admin}`,
    },
  );
  expect(same.body.data).toMatchObject({ revision: 1 });
  expect(
    await s.database.prisma.auditEvent.count({
      where: { projectId: project.id, action: 'assistance.settings_changed' },
    }),
  ).toBe(1);
});

test('on with a match: the model is not called', async () => {
  const { project, reports } = await projectWithContracts();
  await turnOn(project.id);
  const result = await resolve(project.id, 'Weekly report for the board');
  expect(result.matched).toBe(true);
  expect(result.contract?.contract_id).toBe(reports.id);
  expect(result.explanation.assistance).toBeUndefined();
  expect(fake.received).toHaveLength(0);
  expect((await budget(project.id)).day.calls_used).toBe(0);
});

test('on without a match: a suggestion with its reason, audited, budget consumed, shown by preflight', async () => {
  const { project, reports } = await projectWithContracts();
  await turnOn(project.id);
  fake.pick = 'Reports';
  const result = await resolve(project.id, 'summarize the quarterly numbers');
  expect(result.matched).toBe(false);
  expect(result.contract).toBeNull();
  expect(result.explanation.assistance).toMatchObject({
    model_assisted: true,
    trigger: 'no_match',
    outcome: 'suggested',
    provider: 'openai',
    model: 'gpt-4.1',
    suggestion: { contract_id: reports.id, name: 'Reports', reason: 'It is about reports.' },
    contracts_offered: 2,
    tokens_in: 50,
    tokens_out: 10,
    routing: 'pin_required',
  });
  // The fake got one structured-output request for the configured model, with the workspace's credential.
  expect(fake.received).toHaveLength(1);
  const sent = fake.received[0]!;
  expect(sent.url).toBe('/v1/chat/completions');
  expect(sent.headers.authorization).toBe(`Bearer ${providerSecret}`);
  expect(sent.body.model).toBe('gpt-4.1');
  expect(sent.body.response_format.type).toBe('json_schema');
  // Only the allow-listed fields: intent, capabilities, offered contracts' ids, names and phrases.
  const user = JSON.parse(sent.body.messages.find((m) => m.role === 'user')!.content) as Record<
    string,
    unknown
  >;
  expect(Object.keys(user).sort()).toEqual(['contracts', 'intent', 'required_capabilities']);
  expect(user.contracts).toEqual(
    expect.arrayContaining([{ contract_id: reports.id, name: 'Reports', phrases: ['weekly report'] }]),
  );

  const [audited] = await calls(project.id);
  expect(audited).toMatchObject({
    outcome: 'suggested',
    actor_kind: 'api_key',
    model: 'gpt-4.1',
    tokens_in: 50,
    tokens_out: 10,
    suggestion: { contract_id: reports.id },
    prompt: null,
  });
  expect(audited!.prompt_sha256).toMatch(/^[0-9a-f]{64}$/);
  expect(audited!.latency_ms).not.toBeNull();
  const used = await budget(project.id);
  expect(used.day).toMatchObject({ calls_used: 1, tokens_used: 60 });
  expect(used.month).toMatchObject({ calls_used: 1, tokens_used: 60 });

  const preflight = await call(
    'POST',
    `/api/v1/projects/${project.id}/workflow/preflight`,
    { intent: 'summarize the quarterly numbers' },
    { 'x-api-key': readKey },
  );
  expect(preflight.status).toBe(200);
  const pre = preflight.body.data as {
    matched: boolean;
    launch_outcome: string;
    explanation: Resolved['explanation'];
  };
  expect(pre.matched).toBe(false);
  expect(pre.launch_outcome).toBe('refused');
  expect(pre.explanation.assistance).toMatchObject({ outcome: 'suggested', model_assisted: true });
  // Nothing but the audit events and the budget counter was written.
  expect(await s.database.prisma.invocation.count({ where: { projectId: project.id } })).toBe(0);
  expect((await budget(project.id)).day.calls_used).toBe(2);
});

test('a prompt is stored only when the project opts in', async () => {
  const { project } = await projectWithContracts();
  await turnOn(project.id, { store_prompts: true });
  await resolve(project.id, 'summarize the quarterly numbers');
  const [audited] = await calls(project.id);
  expect(audited!.prompt).toContain('summarize the quarterly numbers');
});

test.each([
  ['invalid', 'invalid_answer'],
  ['foreign_id', 'invalid_answer'],
  ['not_json', 'invalid_answer'],
  ['error', 'provider_down'],
  ['none', 'no_suggestion'],
] as const)('model answer %s is the typed outcome %s, never a guess', async (mode, outcome) => {
  const { project } = await projectWithContracts();
  await turnOn(project.id, { allow_assisted_routing: true });
  fake.mode = mode;
  const result = await resolve(project.id, 'summarize the quarterly numbers');
  expect(result.matched).toBe(false);
  expect(result.explanation.assistance).toMatchObject({ outcome, suggestion: null });
  expect((await calls(project.id))[0]).toMatchObject({ outcome, suggestion: null });
  // Assisted routing has nothing to follow.
  const created = await invoke(project.id, { intent: 'summarize the quarterly numbers' });
  expect(created.route).toMatchObject({ matched: false, contract_id: null });
  expect(created.route.model_assisted).toBeUndefined();
});

test('provider timeout and an unreachable provider are typed outcomes', async () => {
  const { project } = await projectWithContracts();
  await turnOn(project.id, { timeout_ms: 300 });
  fake.mode = 'slow';
  const started = Date.now();
  const slow = await resolve(project.id, 'summarize the quarterly numbers');
  expect(Date.now() - started).toBeLessThan(1400);
  expect(slow.explanation.assistance).toMatchObject({ outcome: 'timeout', suggestion: null });

  await configure(project.id, { base_url: 'http://127.0.0.1:9/v1' });
  const down = await resolve(project.id, 'summarize the quarterly numbers');
  expect(down.explanation.assistance).toMatchObject({ outcome: 'provider_down', suggestion: null });
  expect((await calls(project.id)).map((c) => c.outcome)).toEqual(['provider_down', 'timeout']);
});

test('50 concurrent resolves never pass the daily ceiling of calls', async () => {
  const { project } = await projectWithContracts();
  await turnOn(project.id, { budget: { calls_per_day: 7, warning_percent: 50 } });
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => resolve(project.id, `summarize the quarterly numbers ${i}`)),
  );
  const outcomes = results.map((r) => r.explanation.assistance?.outcome);
  expect(outcomes.filter((o) => o === 'suggested')).toHaveLength(7);
  expect(outcomes.filter((o) => o === 'budget_exhausted')).toHaveLength(43);
  expect(fake.received).toHaveLength(7);
  const used = await budget(project.id);
  expect(used.day).toMatchObject({ calls_used: 7, calls_limit: 7, warning: true, exhausted: true });
  expect(used).toMatchObject({ warning: true, exhausted: true, warning_percent: 50 });
  const audited = await calls(project.id);
  expect(audited.filter((c) => c.outcome === 'budget_exhausted')).toHaveLength(43);
  // A token ceiling is enforced the same way: the next reservation does not fit.
  await configure(project.id, { budget: { calls_per_day: 100, tokens_per_day: 10 } });
  const tokens = await resolve(project.id, 'summarize the quarterly numbers');
  expect(tokens.explanation.assistance?.outcome).toBe('budget_exhausted');
  expect(fake.received).toHaveLength(7);
});

test('secrets in the intent never reach the model server', async () => {
  const { project } = await projectWithContracts();
  await turnOn(project.id);
  const secrets = [
    `sk-${randomBytes(20).toString('hex')}`,
    `whsec_${randomBytes(20).toString('base64url')}`,
    `rly_${randomBytes(20).toString('hex')}`,
    `ghp_${randomBytes(20).toString('hex')}`,
    `svc_abcdefabcdef_${randomBytes(20).toString('hex')}`,
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlc2lnbmF0dXJl',
  ];
  const password = `pw${randomBytes(8).toString('hex')}`;
  const pem = `-----BEGIN PRIVATE KEY-----\nMIIE${randomBytes(24).toString('base64')}\n-----END PRIVATE KEY-----`;
  const intent = `summarize numbers using ${secrets.join(' and ')} at postgres://admin:${password}@db.internal/x ${pem}`;
  const result = await resolve(project.id, intent);
  expect(result.explanation.assistance?.outcome).toBe('suggested');
  expect(fake.received).toHaveLength(1);
  const raw = fake.received[0]!.raw;
  for (const secret of [...secrets, password, 'MIIE']) expect(raw).not.toContain(secret);
  expect(raw).toContain('[REDACTED');
  expect(raw).toContain('summarize numbers using');
  expect(raw).not.toContain(providerSecret);
  // The workspace credential is in no log line and no audit row of the Workflow API.
  expect(s.logs.join('')).not.toContain(providerSecret);
  const audit = await s.database.prisma.auditEvent.findMany({ where: { projectId: project.id } });
  expect(JSON.stringify(audit)).not.toContain(providerSecret);
});

test('a tie the total order broke is offered to the model only with assist_on_tie', async () => {
  const project = await newProject(s);
  const older = await seedContract(s, project.id, { name: 'Older', intentContains: ['monthly close'] });
  const newer = await seedContract(s, project.id, {
    name: 'Newer',
    intentContains: ['monthly close'],
    templateKey: 'close-flow',
  });
  await turnOn(project.id);
  const plain = await resolve(project.id, 'run the monthly close');
  expect(plain.contract?.contract_id).toBe(older.id);
  expect(plain.explanation.assistance).toBeUndefined();
  expect(fake.received).toHaveLength(0);

  await configure(project.id, { assist_on_tie: true });
  fake.pick = 'Newer';
  const tie = await resolve(project.id, 'run the monthly close');
  // The deterministic winner stands; the suggestion is shown beside it.
  expect(tie.matched).toBe(true);
  expect(tie.contract?.contract_id).toBe(older.id);
  expect(tie.explanation.assistance).toMatchObject({
    trigger: 'tie',
    outcome: 'suggested',
    contracts_offered: 2,
    suggestion: { contract_id: newer.id },
  });
});

async function invoke(
  projectId: string,
  body: Record<string, unknown>,
  key: string = randomUUID(),
  status = 201,
) {
  const res = await call('POST', `/api/v1/projects/${projectId}/workflow/invocations`, body, {
    'x-api-key': runKey,
    'idempotency-key': key,
  });
  expect(res.status).toBe(status);
  return res.body.data as {
    invocation_id: string;
    route: {
      matched: boolean;
      selection: string;
      contract_id: string | null;
      winner_reason: string | null;
      model_assisted?: boolean;
    };
  };
}

test('assisted routing: refused unless pinned or allowed, recorded when allowed', async () => {
  const { project, deploys } = await projectWithContracts();
  await turnOn(project.id);
  fake.pick = 'Deploys';
  const intent = 'ship the new frontend build';

  const refused = await invoke(project.id, { intent });
  expect(refused.route).toMatchObject({ matched: false, contract_id: null, selection: 'resolved' });
  expect(refused.route.model_assisted).toBeUndefined();

  const pinned = await invoke(project.id, { intent, workflow_contract_id: deploys.id });
  expect(pinned.route).toMatchObject({
    matched: true,
    selection: 'pinned_contract',
    contract_id: deploys.id,
  });

  await configure(project.id, { allow_assisted_routing: true });
  const explained = await resolve(project.id, intent);
  expect(explained.matched).toBe(false);
  expect(explained.explanation.assistance).toMatchObject({ routing: 'allowed', outcome: 'suggested' });
  // Preflight checks the readiness of the contract an invocation would follow.
  const pre = await call(
    'POST',
    `/api/v1/projects/${project.id}/workflow/preflight`,
    { intent },
    { 'x-api-key': readKey },
  );
  expect(pre.status).toBe(200);
  expect(pre.body.data).toMatchObject({ matched: false, contract: { contract_id: deploys.id } });
  const key = randomUUID();
  const asked = fake.received.length;
  const followed = await invoke(project.id, { intent }, key);
  expect(fake.received).toHaveLength(asked + 1);
  // A replay answers from the stored row and spends no model call.
  const replay = await invoke(project.id, { intent }, key, 200);
  expect(replay.invocation_id).toBe(followed.invocation_id);
  expect(replay.route.model_assisted).toBe(true);
  expect(fake.received).toHaveLength(asked + 1);
  expect(followed.route).toMatchObject({
    matched: true,
    selection: 'resolved',
    contract_id: deploys.id,
    model_assisted: true,
  });
  expect(followed.route.winner_reason).toMatch(/^Model-assisted: /);
  const stored = await s.database.prisma.invocation.findUniqueOrThrow({
    where: { id: followed.invocation_id },
  });
  expect(stored.contractId).toBe(deploys.id);
  expect(stored.templateKey).toBe('deploy-flow');
  const read = await call(
    'GET',
    `/api/v1/projects/${project.id}/workflow/invocations/${followed.invocation_id}`,
    undefined,
    {
      'x-api-key': runKey,
    },
  );
  expect(read.status).toBe(200);
  expect((read.body.data as { route: { model_assisted?: boolean } }).route.model_assisted).toBe(true);
});
