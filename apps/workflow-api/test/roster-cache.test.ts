import { randomBytes, randomUUID } from 'node:crypto';
import { createHubInternalClient, unwrap } from '@svc/contracts';
import { createLogger, createRedis } from '@svc/service-kit';
import { eventually, testRedisUrl } from '@svc/testing';
import { createHubReads } from '../src/data/hub-reads';
import { planReconcile } from '../src/use-cases/engine/plan-reconcile';
import { createInvocation } from '../src/use-cases/invocations/create-invocation';
import { launchInvocation } from '../src/use-cases/invocations/launch-invocation';
import { assessLaunchReadiness } from '../src/use-cases/resolve/assess-launch-readiness';
import { preflightIntent } from '../src/use-cases/resolve/preflight-intent';
import { startWorkerProcess } from '../src/worker';
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
 * The rosters the reconcile keeps (decision 105), against the real hub (its build, announcing on this stack's
 * Redis prefix) over HTTP: a roster read counter sits in the hub client's fetch.
 */
let s: WorkflowTestStack;
const logger = createLogger({ name: 'roster-cache-test', level: 'silent' });
/** Roster reads that reached the hub, by project. */
const rosterCalls = new Map<string, number>();
const calls = (projectId: string) => rosterCalls.get(projectId) ?? 0;
/** Runtime readiness reads that reached the hub, by project. */
const readinessCalls = new Map<string, number>();
const readinessReads = (projectId: string) => readinessCalls.get(projectId) ?? 0;

function countingHub() {
  return createHubInternalClient({
    baseUrl: s.hubUrl,
    serviceToken: s.serviceToken,
    fetch: (input: Request) => {
      const match = /\/internal\/v1\/projects\/([^/]+)\/roster/.exec(new URL(input.url).pathname);
      if (match) rosterCalls.set(match[1]!, calls(match[1]!) + 1);
      const ready = /\/internal\/v1\/projects\/([^/]+)\/runtime-readiness/.exec(new URL(input.url).pathname);
      if (ready) readinessCalls.set(ready[1]!, readinessReads(ready[1]!) + 1);
      return fetch(input);
    },
  });
}

beforeAll(async () => {
  s = await startWorkflowTestStack();
}, 60_000);

afterAll(async () => {
  await s?.close();
});

/** A host with a fresh heartbeat and an agent of `project` on it (registered: on the roster, not running). */
async function registeredAgent(project: { code: string }, capabilities: string[]) {
  const hostId = await registerRuntimeHost(s, true);
  const registered = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: s.workspace.slug } },
      body: {
        name: `agent-${randomBytes(4).toString('hex')}`,
        runtime_instance_id: hostId,
        capabilities,
        project_code: project.code,
        model: 'local/echo',
      } as never,
    }),
  ) as { id?: string; agent?: { id: string } };
  return (registered.agent?.id ?? registered.id) as string;
}

describe('the roster kept for the reconcile', () => {
  test('when the reconcile reads a roster twice within its age, then the hub is asked once; when the entry is older, then it is read again; a failed read is not kept', async () => {
    const project = await newProject(s);
    let now = 0;
    const reads = createHubReads(countingHub(), logger, { rosterMaxAgeMs: 1_000, clock: () => now });
    const ref = { id: project.id, workspaceId: s.workspace.id };

    expect(await reads.recentRoster(ref, ['code'])).toEqual([]);
    now = 1_000;
    expect(await reads.recentRoster(ref, ['code'])).toEqual([]);
    expect(calls(project.id)).toBe(1);
    // Another capability set is another read.
    await reads.recentRoster(ref, ['review']);
    expect(calls(project.id)).toBe(2);
    now = 1_001;
    await reads.recentRoster(ref, ['code']);
    expect(calls(project.id)).toBe(3);

    // A project the hub does not know: null, asked again each time.
    const missing = { id: 'prj_missing', workspaceId: s.workspace.id };
    expect(await reads.recentRoster(missing)).toBeNull();
    expect(await reads.recentRoster(missing)).toBeNull();
    expect(calls('prj_missing')).toBe(2);
  });

  test('when the hub announces a roster change of the workspace, then the worker’s next reconcile read asks the hub and sees it; the launch readiness path asks every time', async () => {
    const redis = createRedis(testRedisUrl(), { name: 'roster-cache-worker' });
    const worker = startWorkerProcess({
      database: s.database,
      redis,
      redisUrl: testRedisUrl(),
      queuePrefix: s.queuePrefix,
      logger,
      hub: countingHub(),
      // A long age: only the notice can make the next read ask the hub.
      engine: { rosterMaxAgeMs: 10_000 },
      definitions: [],
      sweeper: false,
    });
    try {
      await worker.noticesReady;
      const project = await newProject(s);
      await seedContract(s, project.id, { definition: templateDefinition(['cache-cap']) });
      await seedSchema(s, project.id);
      const agentId = await registeredAgent(project, ['cache-cap']);
      const ref = { id: project.id, workspaceId: s.workspace.id };
      const reads = worker.deps.hubReads;

      const before = await reads.recentRoster(ref, ['cache-cap']);
      expect(before?.map((a) => [a.agent_id, a.running])).toEqual([[agentId, false]]);
      await reads.recentRoster(ref, ['cache-cap']);
      expect(calls(project.id)).toBe(1);

      // The launch readiness path reads after it asked, kept roster or not.
      await preflightIntent(worker.deps, project.id, { intent: 'weekly report' });
      await preflightIntent(worker.deps, project.id, { intent: 'weekly report' });
      expect(calls(project.id)).toBe(3);

      // The hub announces the start (and the heartbeat that follows it changes nothing it would announce).
      await startAndHeartbeat(s, agentId);
      await eventually(
        async () => {
          const roster = await reads.recentRoster(ref, ['cache-cap']);
          return roster?.[0]?.running === true;
        },
        5_000,
        'the started agent running on the kept roster',
        { intervalMs: 20 },
      );
      const after = calls(project.id);
      expect(after).toBeGreaterThan(3);
      // Kept again from that read on.
      await reads.recentRoster(ref, ['cache-cap']);
      expect(calls(project.id)).toBe(after);
    } finally {
      await worker.close();
      await redis.quit();
    }
  });

  test('when a launch finds nothing missing in the recent answers, then it asks the hub nothing more; when they miss an owner, then it asks again and sees the agent started a moment ago', async () => {
    const project = await newProject(s);
    const definition = templateDefinition(['launch-cap']);
    await seedContract(s, project.id, { definition });
    const agentId = await registeredAgent(project, ['launch-cap']);
    const reads = createHubReads(countingHub(), logger, { rosterMaxAgeMs: 60_000 });
    const deps = { ...s.service.deps, hubReads: reads };
    const route = {
      matched: true,
      contractId: 'wfc_test',
      template: { key: 'launch-cap', version: '1', definition } as never,
    };
    const launch = () =>
      assessLaunchReadiness(deps, project.id, route, s.workspace.id, {
        limits: { project: null, workspace: null },
        recentHubAnswers: true,
      });
    const codes = (readiness: { blockers: Array<{ code: string }> }) => readiness.blockers.map((b) => b.code);

    // Registered, not running: the recent answers miss an owner, so each launch asks the hub again.
    expect(codes(await launch())).toContain('no_stage_owner');
    // Nothing kept yet: one read of each, not a recent read and then a fresh one.
    expect([calls(project.id), readinessReads(project.id)]).toEqual([1, 1]);
    const first = calls(project.id);
    expect(codes(await launch())).toContain('no_stage_owner');
    expect(calls(project.id)).toBeGreaterThan(first);

    // Started a moment ago, with no notice to drop the kept roster: the launch still sees it (asked again).
    await startAndHeartbeat(s, agentId);
    const started = await launch();
    expect(codes(started)).not.toContain('no_stage_owner');

    // Nothing missing now: the next launches take the kept answers.
    const [rosterBefore, readinessBefore] = [calls(project.id), readinessReads(project.id)];
    await launch();
    await launch();
    expect([calls(project.id), readinessReads(project.id)]).toEqual([rosterBefore, readinessBefore]);
  });

  test('when the kept roster names an agent that stopped since (its notice lost), then the hub refuses its handoff and the plan reads the roster again and hands the stage to a running agent', async () => {
    const project = await newProject(s);
    await seedContract(s, project.id, { definition: templateDefinition(['stale-cap']) });
    await seedSchema(s, project.id);
    const stopped = await registeredAgent(project, ['stale-cap']);
    const other = await registeredAgent(project, ['stale-cap']);
    await startAndHeartbeat(s, stopped);
    // Kept for a minute and no notices heard: only the hub's refusal can tell the plan.
    const reads = createHubReads(countingHub(), logger, { rosterMaxAgeMs: 60_000 });
    const deps = { ...s.service.deps, hubReads: reads };
    const running = (roster: Array<{ agent_id: string; running: boolean }> | null) =>
      roster?.filter((a) => a.running).map((a) => a.agent_id);
    const ref = { id: project.id, workspaceId: s.workspace.id };
    expect(running(await reads.recentRoster(ref, ['stale-cap']))).toEqual([stopped]);

    // The first agent stops and the other starts; the kept roster still says the first runs.
    unwrap(await s.hub.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId: stopped } } }));
    await startAndHeartbeat(s, other);
    expect(running(await reads.recentRoster(ref, ['stale-cap']))).toEqual([stopped]);

    const projectRef = { id: project.id, code: project.code, name: project.code, workspace: s.workspace };
    const actor = { kind: 'api_key', keyId: 'key_test', workspaceId: s.workspace.id, scopes: [] } as never;
    const { invocation } = await createInvocation(deps, actor, projectRef, {
      idempotencyKey: randomUUID(),
      correlationId: null,
      body: { intent: 'weekly report' },
    });
    await launchInvocation(deps, actor, projectRef, invocation.id);
    const before = calls(project.id);
    const plan = await planReconcile(deps, invocation.id);
    expect(plan?.owner?.roster).toEqual({ kind: 'assigned', agentId: other, handoffId: expect.any(String) });
    // One fresh read after the refusal, kept from then on.
    expect(calls(project.id)).toBe(before + 1);
    expect(running(await reads.recentRoster(ref, ['stale-cap']))).toEqual([other]);
  });
});
