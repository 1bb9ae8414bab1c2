import { randomBytes, randomUUID } from 'node:crypto';
import { createHubInternalClient, unwrap } from '@svc/contracts';
import { createLogger, createRedis, newId } from '@svc/service-kit';
import type { Redis } from '@svc/service-kit';
import { testRedisUrl } from '@svc/testing';
import { createWorkflowDeps } from '../src/app';
import { createDeliveryQueue } from '../src/data/delivery.queue';
import { createEngineQueue } from '../src/data/reconcile.queue';
import { createInvocation } from '../src/use-cases/invocations/create-invocation';
import { preflightIntent } from '../src/use-cases/resolve/preflight-intent';
import { launchInvocation } from '../src/use-cases/invocations/launch-invocation';
import {
  newProject,
  registerRuntimeHost,
  seedContract,
  seedSchema,
  startAndHeartbeat,
  templateDefinition,
} from './support/invocations-fixtures';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

/**
 * Preflight and launch run one readiness check: for every blocker kind, what preflight says launch would do
 * (`launch_outcome`, the blockers) is what launch does — 409 `launch_blocked` with the same blockers when
 * `refused`, 202 with `launch.outcome` and the same blockers when accepted (waiting for an owner or not).
 */
jest.setTimeout(90_000);

let s: WorkflowTestStack;
let apiKey: string;

beforeAll(async () => {
  s = await startWorkflowTestStack();
  apiKey = await s.key(['workflows:run', 'workflows:read', 'workflow-contracts:read']);
}, 90_000);

afterAll(async () => {
  await s?.close();
});

interface Outcome {
  outcome: string;
  codes: string[];
  effects: string[];
}

async function call(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Reply };
}

interface ReplyBlocker {
  code: string;
  effect: string;
}
/** A success body or a problem of preflight, invoke or launch, read loosely. */
interface Reply {
  code?: string;
  blockers: ReplyBlocker[];
  data: { invocation_id: string; state: string; launch_outcome: string; blockers: ReplyBlocker[] };
  launch: { outcome: string; blockers: ReplyBlocker[] };
}

const summarize = (outcome: string, blockers: { code: string; effect: string }[]): Outcome => ({
  outcome,
  codes: blockers.map((b) => b.code).sort(),
  effects: blockers.map((b) => `${b.code}:${b.effect}`).sort(),
});

/** Preflight the intent, then invoke and launch it: both answers, summarized the same way. */
async function preflightThenLaunch(projectId: string, intent: string) {
  const pre = await call(`/api/v1/projects/${projectId}/workflow/preflight`, { intent });
  expect(pre.status).toBe(200);
  const preflight = summarize(pre.body.data.launch_outcome, pre.body.data.blockers);
  const created = await call(
    `/api/v1/projects/${projectId}/workflow/invocations`,
    { intent },
    { 'Idempotency-Key': randomUUID() },
  );
  expect(created.status).toBe(201);
  const id = created.body.data.invocation_id as string;
  const launched = await call(`/api/v1/projects/${projectId}/workflow/invocations/${id}/launch`, {});
  let launch: Outcome;
  if (launched.status === 409) {
    expect(launched.body.code).toBe('launch_blocked');
    launch = summarize('refused', launched.body.blockers);
  } else {
    expect(launched.status).toBe(202);
    launch = summarize(launched.body.launch.outcome, launched.body.launch.blockers);
    expect(launched.body.data.state).toBe('launching');
  }
  return { preflight, launch, invocationId: id };
}

const registerHost = (heartbeat: boolean) => registerRuntimeHost(s, heartbeat);

/** Registers an agent of the project on the host; `running` starts it at the hub and heartbeats it idle. */
async function addAgent(hostId: string, projectCode: string, capabilities: string[], running: boolean) {
  const registered = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: s.workspace.slug } },
      body: {
        name: `agent-${randomBytes(4).toString('hex')}`,
        runtime_instance_id: hostId,
        capabilities,
        project_code: projectCode,
        model: 'local/echo',
      } as never,
    }),
  ) as { id?: string; agent?: { id: string } };
  if (!running) return;
  await startAndHeartbeat(s, (registered.agent?.id ?? registered.id) as string);
}

/** A project with a ready route for `capability` (contract, template, registered schema). */
async function readyProject(capability: string) {
  const project = await newProject(s);
  await seedContract(s, project.id, { definition: templateDefinition([capability]) });
  await seedSchema(s, project.id);
  return project;
}

describe('preflight and launch agree on every blocker kind', () => {
  test('no_contract_matched: both refuse', async () => {
    const project = await newProject(s);
    const { preflight, launch } = await preflightThenLaunch(project.id, 'bake a cake');
    expect(preflight).toEqual({
      outcome: 'refused',
      codes: ['no_contract_matched'],
      effects: ['no_contract_matched:refuses_launch'],
    });
    expect(launch).toEqual(preflight);
  });

  test('template_not_found: both refuse', async () => {
    const project = await newProject(s);
    await s.database.prisma.workflowContract.create({
      data: {
        id: newId('wfc'),
        workspaceId: s.workspace.id,
        projectId: project.id,
        name: 'No template',
        priority: 10,
        classifier: { intentContains: ['weekly report'], requiredCapabilities: [], metadata: {} },
        templateKey: 'missing-flow',
        templateVersion: '1.0.0',
        isActive: true,
      },
    });
    const { preflight, launch } = await preflightThenLaunch(project.id, 'weekly report');
    expect(preflight.outcome).toBe('refused');
    expect(preflight.codes).toContain('template_not_found');
    expect(launch).toEqual(preflight);
  });

  test('template_incomplete: both refuse', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, {
      definition: { ...templateDefinition(), artifact_schema: { name: '', version: '' } },
    });
    const { preflight, launch } = await preflightThenLaunch(project.id, 'weekly report');
    expect(preflight.outcome).toBe('refused');
    expect(preflight.codes).toContain('template_incomplete');
    expect(launch).toEqual(preflight);
  });

  test('artifact_schema_not_registered and artifact_schema_deprecated: both refuse', async () => {
    const missing = await newProject(s);
    await seedContract(s, missing.id);
    const a = await preflightThenLaunch(missing.id, 'weekly report');
    expect(a.preflight.outcome).toBe('refused');
    expect(a.preflight.codes).toContain('artifact_schema_not_registered');
    expect(a.launch).toEqual(a.preflight);

    const deprecated = await newProject(s);
    await seedContract(s, deprecated.id);
    await seedSchema(s, deprecated.id, { deprecated: true });
    const b = await preflightThenLaunch(deprecated.id, 'weekly report');
    expect(b.preflight.outcome).toBe('refused');
    expect(b.preflight.codes).toContain('artifact_schema_deprecated');
    expect(b.launch).toEqual(b.preflight);
  });

  test('no_stage_owner (no agent has the capability, or the only one is stopped): both accept, waiting for an owner', async () => {
    const hostId = await registerHost(true);
    const nobody = await readyProject('nobody-has-this');
    const a = await preflightThenLaunch(nobody.id, 'weekly report');
    // The workspace has no spawn policy (off): the hub will not spawn the owner, and says why (spawn_*).
    expect(a.preflight.outcome).toBe('accepted_waiting_for_owner');
    expect(a.preflight.codes.filter((c) => !c.startsWith('spawn_'))).toEqual(['no_stage_owner']);
    expect(a.preflight.codes).toContain('spawn_policy_off');
    expect(a.preflight.effects.every((e) => e.endsWith(':waits_for_owner'))).toBe(true);
    expect(a.launch).toEqual(a.preflight);
    const invocation = await s.database.prisma.invocation.findUniqueOrThrow({
      where: { id: a.invocationId },
    });
    expect(invocation.state).toBe('launching');
    expect((invocation.blockers as { code: string }[]).map((b) => b.code).sort()).toEqual(a.preflight.codes);

    const stopped = await readyProject('stopped-cap');
    await addAgent(hostId, stopped.code, ['stopped-cap'], false);
    const b = await preflightThenLaunch(stopped.id, 'weekly report');
    expect(b.preflight.codes.filter((c) => !c.startsWith('spawn_'))).toEqual(['no_stage_owner']);
    expect(b.preflight.codes).toContain('spawn_policy_off');
    expect(b.preflight.outcome).toBe('accepted_waiting_for_owner');
    expect(b.launch).toEqual(b.preflight);
  });

  test('runtime_endpoints (the owner’s host has no fresh heartbeat): both accept, waiting for an owner', async () => {
    const stale = await registerHost(false);
    const project = await readyProject('stale-host-cap');
    await addAgent(stale, project.code, ['stale-host-cap'], false);
    const { preflight, launch } = await preflightThenLaunch(project.id, 'weekly report');
    expect(preflight.outcome).toBe('accepted_waiting_for_owner');
    expect(preflight.effects).toContain('runtime_host_stale:waits_for_owner');
    expect(launch).toEqual(preflight);
  });

  test('no blocker (a running agent with the capability on a ready host): both accept', async () => {
    const hostId = await registerHost(true);
    const project = await readyProject('ready-cap');
    await addAgent(hostId, project.code, ['ready-cap'], true);
    const { preflight, launch } = await preflightThenLaunch(project.id, 'weekly report');
    expect(preflight).toEqual({ outcome: 'accepted', codes: [], effects: [] });
    expect(launch).toEqual(preflight);
  });

  test('hub_unreachable (infrastructure_health): both accept, waiting for an owner', async () => {
    const project = await readyProject('any-cap');
    const logger = createLogger({ name: 'readiness-test', level: 'silent' });
    const redis: Redis = createRedis(testRedisUrl());
    const queue = createEngineQueue({ connection: redis, publisher: redis, prefix: s.queuePrefix, logger });
    const deliveries = createDeliveryQueue({ connection: redis, prefix: s.queuePrefix, logger });
    try {
      const deps = createWorkflowDeps({
        database: s.database,
        queue,
        deliveries,
        logger,
        hub: createHubInternalClient({ baseUrl: 'http://127.0.0.1:1', serviceToken: 'x'.repeat(40) }),
      });
      const ref = { id: project.id, code: project.code, name: project.code, workspace: s.workspace };
      const actor = { kind: 'api_key', keyId: 'key_test', workspaceId: s.workspace.id, scopes: [] } as never;
      const pre = await preflightIntent(deps, project.id, { intent: 'weekly report' });
      const { invocation } = await createInvocation(deps, actor, ref, {
        idempotencyKey: randomUUID(),
        correlationId: null,
        body: { intent: 'weekly report' },
      });
      const launched = await launchInvocation(deps, actor, ref, invocation.id);
      const preflight = summarize(pre.launch_outcome, pre.blockers);
      expect(preflight).toEqual({
        outcome: 'accepted_waiting_for_owner',
        codes: ['hub_unreachable'],
        effects: ['hub_unreachable:waits_for_owner'],
      });
      expect(summarize(launched.launch.outcome, launched.launch.blockers)).toEqual(preflight);
    } finally {
      await Promise.all([queue.close(), deliveries.close()]);
      await redis.quit().catch(() => redis.disconnect());
    }
  });
});
