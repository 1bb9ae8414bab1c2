import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Workflow } from '@svc/sdk';
import { eventually, sleep, startRunStack } from '@svc/testing';
import type { RunStack } from '@svc/testing';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import { expectEachCompletedOnce } from './support/completions';

/**
 * Hosts that die (decision 83): real hub, Workflow API, worker and reference agents, with runtime hosts whose
 * heartbeats run in processes of their own. A host killed with SIGKILL (its heartbeat and its agents) has its
 * agents marked lost by the hub, the stage its agent held goes to another host's agent, and the run completes
 * once; an agent the engine took a stage from gets stages again once it shows life.
 */
jest.setTimeout(240_000);

type Stack = RunStack<Database>;

/** A handler that takes `ms` before answering as the default handler does. */
function handlerTaking(ms: number): string {
  const file = path.join(os.tmpdir(), `svc-fleet-${ms}-${randomUUID()}.cjs`);
  writeFileSync(
    file,
    `const { defaultStageHandler } = require(${JSON.stringify(
      path.resolve(__dirname, '..', '..', 'reference-agent', 'dist', 'index.js'),
    )});
     module.exports = async (ctx) => { await new Promise((r) => setTimeout(r, ${ms})); return defaultStageHandler(ctx); };`,
  );
  return file;
}

function workflowOf(s: Stack): Workflow {
  return new Workflow({ baseUrl: s.workflowUrl, apiKey: s.apiKey, projectId: s.project.id, maxRetries: 0 });
}

async function invokeAndLaunch(s: Stack, intent: string): Promise<string> {
  const workflow = workflowOf(s);
  const { invocation } = await workflow.invocations.create({ intent });
  await workflow.invocations.launch(invocation.invocation_id);
  return invocation.invocation_id;
}

/** The run's only stage once `agentId` has claimed it. */
async function claimedBy(s: Stack, invocationId: string, agentId: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const stage = await s.database.prisma.runStage.findFirst({ where: { invocationId } });
      return stage && stage.ownerAgentId === agentId && stage.state === 'claimed' ? stage : null;
    },
    timeoutMs,
    `the stage claimed by ${agentId}`,
  );
}

/** What an agent's token gets from the Workflow API for a stage action. */
async function stageAction(s: Stack, token: string, stageId: string, action: 'complete' | 'heartbeat') {
  const res = await fetch(`${s.workflowUrl}/api/v1/agents/me/workflow-stages/${stageId}/${action}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(action === 'complete' ? { summary: 'late' } : {}),
  });
  return { status: res.status, body: (await res.json()) as { code?: string } };
}

const loadAverage = () => {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(', ');
  }
};

function openDatabase(url: string): Database {
  return createDatabase(url, { poolSize: 2 });
}

describe('a runtime host that dies', () => {
  let s: Stack;

  beforeAll(async () => {
    // The engine's own timing at its defaults (a 60 s stall window, a sweep every 2 s, idle runs rechecked
    // every 15 s), so the recovery below comes from the hub marking the dead host's agents lost, not from a
    // shortened stall.
    s = await startRunStack({
      database: openDatabase,
      env: {
        WORKFLOW_STAGE_STALL_SECONDS: '60',
        WORKFLOW_SWEEP_INTERVAL_MS: '2000',
        WORKFLOW_RECHECK_MS: '15000',
        WORKFLOW_OUTBOX_REDELIVER_MS: '10000',
      },
    });
  }, 120_000);

  afterAll(async () => {
    await s?.close();
  }, 60_000);

  test('when the host owning a running stage is killed with SIGKILL, then the run completes once on another host within 60 s', async () => {
    const route = await s.seedRoute({
      intent: 'fleet host death report',
      stages: [{ key: 'survey', title: 'Survey', required_capabilities: ['fleet'] }],
    });
    const hostA = await s.addHost('fleet-a');
    const hostB = await s.addHost('fleet-b');
    // The first owner takes long enough to be mid-stage when its host dies.
    const agentA = await s.addAgent(['fleet'], { host: hostA, handler: handlerTaking(120_000) });
    const invocationId = await invokeAndLaunch(s, route.intent);
    const held = await claimedBy(s, invocationId, agentA.id);
    const agentB = await s.addAgent(['fleet'], { host: hostB, handler: handlerTaking(500) });

    const killedAt = Date.now();
    await hostA.kill('SIGKILL');
    const done = await workflowOf(s).invocations.waitForArtifact(invocationId, {
      timeoutMs: 90_000,
      intervalMs: 200,
      waitFor: 'all',
    });
    const recoverySeconds = (Date.now() - killedAt) / 1000;
    process.stdout.write(
      `fleet: run completed ${recoverySeconds.toFixed(1)} s after its owner's host was killed (${loadAverage()})\n`,
    );
    expect(done).toBeTruthy();
    expect(recoverySeconds).toBeLessThan(60);

    // Once: one run, one artifact, one completion; the stage completed once, by the other host's agent.
    await expectEachCompletedOnce(workflowOf(s), s.database, [invocationId], 10_000);
    const stage = await s.database.prisma.runStage.findUniqueOrThrow({ where: { id: held.id } });
    expect(stage).toMatchObject({ state: 'completed', ownerAgentId: agentB.id });
    expect(stage.stalledAgentIds).toContain(agentA.id);
    const audit = s.database.prisma.auditEvent;
    expect(await audit.count({ where: { targetId: held.id, action: 'stage.completed' } })).toBe(1);
    // Taken from the dead host's agent because the hub counts it lost, not by the 60 s stall.
    expect(await audit.count({ where: { targetId: held.id, action: 'stage.owner_lost' } })).toBe(1);
    expect(await audit.count({ where: { targetId: held.id, action: 'stage.stalled' } })).toBe(0);

    // The hub: the dead host's agent is lost (not stopped), the host marked lost, the other host's agent runs.
    const agentOf = async (id: string) =>
      (await s.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: id } } })).data?.data;
    expect(await agentOf(agentA.id)).toMatchObject({ status: 'lost' });
    expect((await agentOf(agentB.id))?.status).not.toBe('lost');
    const host = (
      await s.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: hostA.id } } })
    ).data?.data;
    expect(host?.lost_at).toEqual(expect.any(String));
    expect(host?.readiness.spawn_ready).toBe(false);

    // The old owner comes back and tries to finish what it held: refused, nothing changes.
    const late = await stageAction(s, agentA.token, held.id, 'complete');
    expect(late).toMatchObject({ status: 409, body: { code: 'stage_reassigned' } });
    expect((await stageAction(s, agentA.token, held.id, 'heartbeat')).status).toBe(409);
    expect(await audit.count({ where: { targetId: held.id, action: 'stage.completed' } })).toBe(1);
    expect(await s.database.prisma.artifact.count({ where: { invocationId } })).toBe(1);
  });
});

describe('an agent the engine took a stage from', () => {
  let s: Stack;

  beforeAll(async () => {
    // The run stack's short stall window (3 s): the stage is taken from a killed owner within seconds.
    s = await startRunStack({ database: openDatabase });
  }, 120_000);

  afterAll(async () => {
    await s?.close();
  }, 60_000);

  test('when it shows life again, then it is given the stage again and the run completes (one capable agent)', async () => {
    const route = await s.seedRoute({
      intent: 'fleet comeback report',
      stages: [{ key: 'only', title: 'Only', required_capabilities: ['comeback'] }],
    });
    const agent = await s.addAgent(['comeback'], { handler: handlerTaking(120_000) });
    const invocationId = await invokeAndLaunch(s, route.intent);
    const held = await claimedBy(s, invocationId, agent.id);
    await agent.kill('SIGKILL');

    // The stage is taken from it (it stopped heartbeating the stage) and, with no other agent, waits.
    await eventually(
      async () => {
        const stage = await s.database.prisma.runStage.findUniqueOrThrow({ where: { id: held.id } });
        return stage.state === 'pending' && (stage.stalledAgentIds as string[]).includes(agent.id);
      },
      30_000,
      'the stage taken from the killed owner',
    );
    await sleep(4_000);
    const waiting = await s.database.prisma.runStage.findUniqueOrThrow({ where: { id: held.id } });
    expect(waiting).toMatchObject({ state: 'pending', ownerAgentId: null });

    // The same agent starts again and heartbeats: it gets the stage back, and the run completes.
    await agent.start(handlerTaking(200));
    await expectEachCompletedOnce(workflowOf(s), s.database, [invocationId], 60_000);
    const stage = await s.database.prisma.runStage.findUniqueOrThrow({ where: { id: held.id } });
    expect(stage).toMatchObject({ state: 'completed', ownerAgentId: agent.id });
    expect(stage.attempts).toBeGreaterThanOrEqual(2);
    expect(
      await s.database.prisma.auditEvent.count({ where: { targetId: held.id, action: 'stage.completed' } }),
    ).toBe(1);
  });
});
