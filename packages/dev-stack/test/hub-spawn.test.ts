import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHubClient, unwrap } from '@svc/contracts';
import { Workflow } from '@svc/sdk';
import type { Invocation } from '@svc/sdk';
import { devStackSettings, eventually, removeDevStack, startDevStack } from '@svc/testing';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
import type { DevStackFile } from '../src/state';

/**
 * Runs get owners by spawning (spec: two launch paths, hub spawn): on the whole development stack — hub,
 * Workflow API and worker, `svc runtime up` with its relay — a launched run whose stage no roster agent can
 * own waits visibly while the spawn policy is off, and once the policy allows it the engine asks the hub,
 * the hub calls the host's relay, the relay runs `svc start`, and the spawned agent takes the stage to
 * `completed`.
 */
const CAPABILITY = 'spawned-report';
jest.setTimeout(240_000);

const suffix = randomBytes(3).toString('hex');
let settings: DevStackSettings;
let stack: NodeProcess | undefined;
let file: DevStackFile;

beforeAll(async () => {
  settings = await devStackSettings('spawn', mkdtempSync(path.join(os.tmpdir(), 'svc-hub-spawn-')));
  stack = await startDevStack(settings.env);
  file = JSON.parse(readFileSync(path.join(settings.stateDir, 'dev-stack.json'), 'utf8')) as DevStackFile;
}, 180_000);

afterAll(() => removeDevStack(settings, stack));

const hub = () => createHubClient({ baseUrl: file.hub_url, token: file.participant.token });
const workflow = () =>
  new Workflow({
    baseUrl: file.workflow_url,
    apiKey: file.api_keys.workflow_all,
    projectId: file.project.id,
    workspaceId: file.workspace.id,
  });

async function relaySpawns(): Promise<Record<string, number>> {
  const status = (await (await fetch(`${file.relay_url}/status`)).json()) as {
    spawns: Record<string, number>;
  };
  return status.spawns;
}

/** The contract: one stage that needs a capability no running agent has. */
async function seedRoute(): Promise<string> {
  const intent = `spawned status report ${suffix}`;
  await workflow().artifactSchemas.register({
    project_id: file.project.id,
    name: 'spawned-report',
    version: '1.0.0',
    json_schema: {
      type: 'object',
      required: ['summary'],
      properties: { summary: { type: 'string' } },
    },
  });
  await workflow().contracts.create({
    name: 'spawned report',
    priority: 10,
    fallback: false,
    is_active: true,
    classifier: { intentContains: ['spawned status report'] },
    template: {
      key: 'spawned-report',
      version: '1.0.0',
      required_capabilities: [],
      artifact_schema: { name: 'spawned-report', version: '1.0.0' },
      guardrails: { human_approval_required: false },
      stages: [{ key: 'write', title: 'Write the report', required_capabilities: [CAPABILITY] }],
    },
  });
  return intent;
}

describe('runs get owners by spawning', () => {
  let intent: string;

  test('when the spawn policy is off, then preflight names it as a spawn-policy blocker and the run would wait', async () => {
    intent = await seedRoute();
    const preflight = await workflow().invocations.preflight({ intent });
    expect(preflight.launch_outcome).toBe('accepted_waiting_for_owner');
    const blockers = preflight.blockers.map((b) => [b.category, b.code, b.effect]);
    expect(blockers[0]).toEqual(['roster_ownership', 'no_stage_owner', 'waits_for_owner']);
    // Every reason the hub would not spawn the owner, each waiting (the launch is still accepted).
    expect(blockers.slice(1)).toContainEqual(['spawn_policy', 'spawn_policy_off', 'waits_for_owner']);
    for (const blocker of preflight.blockers.slice(1)) {
      expect(blocker).toMatchObject({
        category: 'spawn_policy',
        effect: 'waits_for_owner',
        stage_key: 'write',
      });
      expect(blocker.recommended_action.length).toBeGreaterThan(0);
    }
    expect(await relaySpawns()).toMatchObject({ requested: 0 });
  });

  test('when the policy allows the capability, then a launched run gets an agent spawned through the relay and completes', async () => {
    unwrap(
      await hub().PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: file.workspace.slug } },
        body: {
          enabled: true,
          allowed_models: ['local/echo'],
          allowed_capabilities: [CAPABILITY],
          allowed_command_keys: ['default'],
          max_running_agents_per_host: 4,
        },
      }),
    );
    const preflight = await workflow().invocations.preflight({ intent });
    expect(preflight.blockers.map((b) => b.code)).toEqual(['no_stage_owner']);
    expect(preflight.blockers[0]!.message).toContain(file.runtime_host.id);

    const invoked = await workflow().invocations.create(
      { intent },
      { idempotencyKey: `spawn-${randomUUID()}` },
    );
    const invocationId = invoked.invocation.invocation_id;
    await workflow().invocations.launch(invocationId);

    // Watch it: the stage waits for a spawned owner (attention owner_spawning), then completes.
    const seen = new Set<string>();
    const notCompleted = (invocation: Invocation | undefined) =>
      `not completed: ${JSON.stringify(invocation)}\n${stack?.stdout().slice(-5000) ?? ''}`;
    let latest: Invocation | undefined;
    const last = await eventually(
      async () => {
        latest = await workflow().invocations.get(invocationId);
        seen.add(latest.attention);
        return ['completed', 'failed', 'cancelled'].includes(latest.state) && latest;
      },
      150_000,
      'the run to end',
      { intervalMs: 300, describe: () => notCompleted(latest) },
    );
    if (last.state !== 'completed') throw new Error(notCompleted(last));
    expect(seen).toContain('owner_spawning');
    const stage = last.stages[0]!;
    expect(stage.owner_spawn).toMatchObject({ state: 'started', runtime_instance_id: file.runtime_host.id });
    expect(stage.owner_agent_id).toBe(stage.owner_spawn!.agent_id);

    // The hub's record, the relay's own counts, and one relay runtime credential for the spawned agent.
    const spawn = unwrap(
      await hub().GET('/api/v1/workspaces/{workspace}/agent-spawns/{spawnId}', {
        params: { path: { workspace: file.workspace.slug, spawnId: stage.owner_spawn!.spawn_id } },
      }),
    );
    expect(spawn).toMatchObject({ state: 'started', agent_id: stage.owner_agent_id });
    expect(await relaySpawns()).toMatchObject({ requested: 1, started: 1, failed: 0 });
    const audit = unwrap(
      await hub().GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: {
          path: { workspace: file.workspace.slug },
          query: { action: 'credential.runtime.issued', target_id: stage.owner_agent_id!, limit: 50 },
        },
      }),
    ) as unknown as Array<{ data: Record<string, unknown> }>;
    expect(audit).toHaveLength(1);
    expect(audit[0]!.data).toMatchObject({ launch_path: 'relay', spawn_id: expect.any(String) });
  });
});
