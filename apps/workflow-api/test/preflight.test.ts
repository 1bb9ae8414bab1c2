import { randomBytes } from 'node:crypto';
import { createHubInternalClient, unwrap } from '@svc/contracts';
import { createLogger } from '@svc/service-kit';
import { createWorkflowDeps } from '../src/app';
import { preflightIntent } from '../src/use-cases/resolve/preflight-intent';
import { resolveIntent } from '../src/use-cases/resolve/resolve-intent';
import {
  countAllRows,
  fuzzBodies,
  newProject,
  seedContract,
  seedSchema,
  templateDefinition,
} from './support/invocations-fixtures';
import { registerRuntimeHost, startAndHeartbeat } from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
let readKey: string;

beforeAll(async () => {
  s = await startWorkflowTestStack();
  readKey = await s.key(['workflow-contracts:read']);
}, 60_000);

afterAll(async () => {
  await s?.close();
});

type Preflight = {
  matched: boolean;
  route_ready: boolean;
  can_launch: boolean;
  launch_outcome: string;
  contract: { contract_id: string } | null;
  template: { key: string; version: string } | null;
  blockers: {
    category: string;
    code: string;
    message: string;
    recommended_action: string;
    effect: string;
    stage_key?: string;
  }[];
  explanation: unknown;
};

async function preflight(projectId: string, body: unknown, apiKey: string | null = readKey) {
  const res = await fetch(`${s.url}/api/v1/projects/${projectId}/workflow/preflight`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(apiKey ? { 'x-api-key': apiKey } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as { code?: string; data: Preflight },
  };
}

const ready = async (projectId: string, body: unknown = { intent: 'Weekly report please' }) => {
  const res = await preflight(projectId, body);
  expect(res.status).toBe(200);
  return res.body.data as Preflight;
};

const CATEGORIES = [
  'classifier_template_configuration',
  'roster_ownership',
  'runtime_endpoints',
  'spawn_policy',
  'infrastructure_health',
];

/** Hub-side fixtures made through the hub's public API as the workspace owner. */
const registerHost = (heartbeat: boolean) => registerRuntimeHost(s, heartbeat);

async function registerAgent(hostId: string, capabilities: string[], placement: Record<string, unknown>) {
  return unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: s.workspace.slug } },
      body: {
        name: `agent-${randomBytes(4).toString('hex')}`,
        runtime_instance_id: hostId,
        capabilities,
        ...placement,
      } as never,
    }),
  );
}

const agentIdOf = (registered: unknown) =>
  ((registered as { agent?: { id: string } }).agent?.id ?? (registered as { id: string }).id) as string;

describe('POST /workflow/preflight', () => {
  test('when no contract matches, then matched and route_ready are false with a configuration blocker', async () => {
    const project = await newProject(s);
    const data = await ready(project.id, { intent: 'bake a cake' });
    expect(data).toMatchObject({
      matched: false,
      route_ready: false,
      can_launch: false,
      launch_outcome: 'refused',
      contract: null,
      template: null,
    });
    expect(data.blockers).toEqual([
      expect.objectContaining({ category: 'classifier_template_configuration', code: 'no_contract_matched' }),
    ]);
    expect(data.explanation).toBeDefined();
  });

  test('when the pinned artifact schema is missing or deprecated, then route_ready is false', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id);
    const missing = await ready(project.id);
    expect(missing).toMatchObject({ matched: true, route_ready: false, can_launch: false });
    expect(missing.blockers.map((b) => b.code)).toContain('artifact_schema_not_registered');

    const other = await newProject(s);
    await seedContract(s, other.id);
    await seedSchema(s, other.id, { deprecated: true });
    const deprecated = await ready(other.id);
    expect(deprecated).toMatchObject({ matched: true, route_ready: false, can_launch: false });
    expect(deprecated.blockers).toContainEqual(
      expect.objectContaining({
        category: 'classifier_template_configuration',
        code: 'artifact_schema_deprecated',
      }),
    );
  });

  test('when the template is incomplete, then route_ready is false with template_incomplete', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, {
      definition: { ...templateDefinition(), artifact_schema: { name: '', version: '' } },
    });
    const data = await ready(project.id);
    expect(data.route_ready).toBe(false);
    expect(data.blockers.map((b) => b.code)).toContain('template_incomplete');
  });

  test('when no roster agent has a stage\u2019s capabilities, then a roster_ownership blocker names the stage', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, { definition: templateDefinition(['pdf-render']) });
    await seedSchema(s, project.id);
    const data = await ready(project.id);
    expect(data).toMatchObject({ matched: true, route_ready: true, can_launch: false });
    const blocker = data.blockers.find((b) => b.category === 'roster_ownership');
    expect(blocker).toMatchObject({ code: 'no_stage_owner', stage_key: 'build' });
    expect(blocker?.recommended_action).toMatch(/start an agent with capabilities pdf-render/i);
    expect(blocker?.effect).toBe('waits_for_owner');
  });

  test('when the stage owner runs on a host without a fresh heartbeat, then a runtime_endpoints blocker', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, { definition: templateDefinition(['stale-cap']) });
    await seedSchema(s, project.id);
    const hostId = await registerHost(false);
    await registerAgent(hostId, ['stale-cap'], { project_code: project.code });
    const data = await ready(project.id);
    expect(data).toMatchObject({
      route_ready: true,
      can_launch: false,
      launch_outcome: 'accepted_waiting_for_owner',
    });
    expect(data.blockers).toContainEqual(
      expect.objectContaining({
        category: 'runtime_endpoints',
        code: 'runtime_host_stale',
        effect: 'waits_for_owner',
      }),
    );
    // Registered but never started: the agent is on the roster but not running, so it cannot own the stage
    // (the engine's own rule).
    expect(data.blockers).toContainEqual(
      expect.objectContaining({
        category: 'roster_ownership',
        code: 'no_stage_owner',
        effect: 'waits_for_owner',
      }),
    );
  });

  test('when contract, template, schema, a team\u2019s agent and a ready host are in place, then can_launch is true', async () => {
    const project = await newProject(s);
    const contract = await seedContract(s, project.id, { definition: templateDefinition(['ready-cap']) });
    await seedSchema(s, project.id);
    const hostId = await registerHost(true);
    const team = unwrap(
      await s.hub.POST('/api/v1/workspaces/{workspace}/teams', {
        params: { path: { workspace: s.workspace.slug } },
        body: { name: `team-${randomBytes(4).toString('hex')}` },
      }),
    );
    const agent = await registerAgent(hostId, ['ready-cap', 'extra'], {
      workdir: '/srv/agents/ready',
      team_id: team.id,
      model: 'local/echo',
    });
    unwrap(
      await s.hub.POST('/api/v1/projects/{projectId}/teams', {
        params: { path: { projectId: project.id } },
        body: { team_id: team.id },
      }),
    );
    // On the roster but not started: not an owner yet.
    const stopped = await ready(project.id);
    expect(stopped).toMatchObject({ can_launch: false, launch_outcome: 'accepted_waiting_for_owner' });
    // The roster blocker, and why the hub would not spawn an owner (the workspace's policy is off).
    expect(stopped.blockers.filter((b) => b.category !== 'spawn_policy').map((b) => b.code)).toEqual([
      'no_stage_owner',
    ]);
    expect(stopped.blockers.map((b) => b.code)).toContain('spawn_policy_off');
    await startAndHeartbeat(s, agentIdOf(agent));
    const data = await ready(project.id);
    expect(data.blockers).toEqual([]);
    expect(data).toMatchObject({
      matched: true,
      route_ready: true,
      can_launch: true,
      launch_outcome: 'accepted',
      contract: { contract_id: contract.id },
      template: { key: 'report-flow', version: '1.0.0' },
    });
  });

  test('when every spawn-ready host is at its own agent limit, then a typed back-pressure blocker with retry_after_seconds', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, { definition: templateDefinition(['limit-cap']) });
    await seedSchema(s, project.id);
    const hostId = await registerHost(true);
    // Only this host may take spawns: the workspace's other hosts report a relay that is not ready.
    const hostKey = await s.key(['runtime-hosts:write']);
    const hosts = unwrap(
      await s.hub.GET('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: { path: { workspace: s.workspace.slug } },
      }),
    );
    for (const other of hosts.filter((h) => h.id !== hostId)) {
      const res = await fetch(`${s.hubUrl}/api/v1/runtime-hosts/${other.id}/heartbeat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': hostKey },
        body: JSON.stringify({ relay_ready: false, console_router_ready: true, runtime_version: '1.0.0' }),
      });
      expect(res.status).toBe(200);
    }
    const policy = (enabled: boolean) =>
      s.hub.PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: s.workspace.slug } },
        body: {
          enabled,
          allowed_models: ['local/echo'],
          allowed_capabilities: ['limit-cap'],
          max_running_agents_per_host: 3,
        },
      });
    unwrap(await policy(true));
    try {
      // A spawn would be allowed: the stage waits for an owner the hub can spawn, no spawn-policy blocker.
      const open = await ready(project.id);
      expect(open.blockers.filter((b) => b.category === 'spawn_policy')).toEqual([]);
      // The host allows one agent and runs one (of another project): every ready host is at its limit.
      unwrap(
        await s.hub.PUT('/api/v1/runtime-hosts/{hostId}/limits', {
          params: { path: { hostId } },
          body: { max_agents: 1 },
        }),
      );
      const busy = await registerAgent(hostId, ['other-cap'], {
        workdir: '/srv/agents/limit',
        model: 'local/echo',
      });
      await startAndHeartbeat(s, agentIdOf(busy));
      const full = await ready(project.id);
      expect(full).toMatchObject({ can_launch: false, launch_outcome: 'accepted_waiting_for_owner' });
      expect(full.blockers).toContainEqual(
        expect.objectContaining({
          category: 'spawn_policy',
          code: 'spawn_host_at_limit',
          effect: 'waits_for_owner',
          retry_after_seconds: 30,
          runtime_instance_ids: [hostId],
        }),
      );
    } finally {
      unwrap(await policy(false));
    }
  });

  test('when the hub cannot be reached, then an infrastructure_health blocker instead of an error', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id);
    await seedSchema(s, project.id);
    const deps = createWorkflowDeps({
      database: s.database,
      queue: undefined as never,
      deliveries: undefined as never,
      logger: createLogger({ name: 'preflight-test', level: 'silent' }),
      hub: createHubInternalClient({ baseUrl: 'http://127.0.0.1:1', serviceToken: 'x'.repeat(40) }),
    });
    const data = await preflightIntent(deps, project.id, { intent: 'weekly report' });
    expect(data).toMatchObject({
      route_ready: true,
      can_launch: false,
      launch_outcome: 'accepted_waiting_for_owner',
    });
    expect(data.blockers).toEqual([
      expect.objectContaining({
        category: 'infrastructure_health',
        code: 'hub_unreachable',
        effect: 'waits_for_owner',
      }),
    ]);
  });

  test('when preflight and resolve run, then no row of any table is created or changed', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id);
    await seedSchema(s, project.id);
    const before = await countAllRows(s);
    const templatesBefore = await s.database.prisma.workflowTemplate.findMany({ orderBy: { id: 'asc' } });
    for (const intent of ['weekly report', 'nothing at all', 'WEEKLY REPORT now']) {
      await ready(project.id, { intent });
      await ready(project.id, { intent, required_capabilities: ['a'], metadata: { source: 'x' } });
      await resolveIntent(
        createWorkflowDeps({
          database: s.database,
          queue: undefined as never,
          deliveries: undefined as never,
          logger: createLogger({ name: 'preflight-test', level: 'silent' }),
          hub: createHubInternalClient({ baseUrl: s.hubUrl, serviceToken: 'x'.repeat(40) }),
        }),
        project.id,
        { intent },
      );
    }
    expect(await countAllRows(s)).toEqual(before);
    expect(await s.database.prisma.workflowTemplate.findMany({ orderBy: { id: 'asc' } })).toEqual(
      templatesBefore,
    );
  });

  test('when blockers are reported, then every category is one of the spec\u2019s five', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, { definition: templateDefinition(['nobody-has-this']) });
    const data = await ready(project.id);
    expect(data.blockers.length).toBeGreaterThan(0);
    for (const blocker of data.blockers) {
      expect(CATEGORIES).toContain(blocker.category);
      expect(blocker.message).toEqual(expect.any(String));
      expect(blocker.recommended_action).toEqual(expect.any(String));
    }
  });

  test('when the key lacks workflow-contracts:read, there is no key, or the project is another workspace\u2019s, then 403, 401, 404', async () => {
    const body = { intent: 'weekly report' };
    const noScope = await preflight(s.project.id, body, await s.key(['workflows:run']));
    expect(noScope.status).toBe(403);
    expect(noScope.body.code).toBe('scope_missing');
    expect((await preflight(s.project.id, body, null)).status).toBe(401);
    const other = await preflight(s.project.id, body, await s.otherProject.key(['workflow-contracts:read']));
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('project_not_found');
  });

  test('when ~100 malformed or fuzzed bodies are posted, then 4xx problems, never a 5xx', async () => {
    const bodies: unknown[] = [
      ...fuzzBodies(100, 7).map((b) =>
        b && typeof b === 'object' && !Array.isArray(b) ? { ...(b as object), workflow_contract_id: 'x' } : b,
      ),
      '{broken',
      '[]',
      { intent: '' },
      { intent: 'ok', metadata: { a: 1 } },
    ];
    for (const body of bodies) {
      const res = await preflight(s.project.id, body);
      if (res.status >= 500) throw new Error(`5xx for ${JSON.stringify(body)}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.type).toMatch(/problem\+json/);
    }
  });
});
