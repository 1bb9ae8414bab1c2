import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { unwrap } from '@svc/contracts';
import { startRuntimeEnvironmentBackfill } from '../src/workers/runtime-environments-backfill.worker';
import { startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

const run = promisify(execFile);
const BACKFILL = path.join(__dirname, '..', 'dist', 'backfill-runtime-environments.js');

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

interface Summary {
  created: Array<{ workspace_id: string; name: string; runtime_instance_id: string }>;
  placed: number;
  skipped: number;
}

/** Runs the built command against the test database, as an operator (or the Job) would. */
async function backfill(): Promise<Summary> {
  const { stdout } = await run(process.execPath, [BACKFILL], {
    env: { PATH: process.env.PATH, DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'warn' },
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim()) as Summary;
}

const snapshot = () =>
  t.database.prisma.runtimeEnvironment.findMany({
    orderBy: { id: 'asc' },
    include: { hosts: { orderBy: { runtimeInstanceId: 'asc' } } },
  });

async function listEnvironments(member: SeededMember) {
  return unwrap(
    await t
      .client({ token: member.token })
      .GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-environments', {
        params: { path: { workspace: member.workspace.slug } },
      }),
  );
}

describe('runtime environment backfill', () => {
  test('when the backfill runs twice (the first time as two concurrent runs), then each host without an environment gets exactly one, and the second run changes nothing', async () => {
    const a = await t.seedMember('owner');
    const b = await t.seedMember('owner');
    // Hosts registered before runtime environments existed are the ones the backfill materializes.
    const before = new Date('2026-01-01T00:00:00Z');
    const edge = await t.seedHost(a.workspace.id, {
      name: 'Edge.01',
      createdAt: before,
      consolePublicBaseUrl: 'https://console.edge-01.example.test',
      relayPublicUrl: 'https://relay.edge-01.example.test',
    });
    const lower = await t.seedHost(a.workspace.id, { name: 'alpha', createdAt: before });
    const upper = await t.seedHost(a.workspace.id, { name: 'Alpha', createdAt: before });
    const far = await t.seedHost(b.workspace.id, {
      name: 'far-away',
      relayPublicUrl: null,
      createdAt: before,
    });
    // A host registered since gets an environment when a tunnel is provisioned for it, never from the backfill.
    const recent = await t.seedHost(a.workspace.id, { name: 'recent' });
    // A host already in an environment (provisioned through the API) is left alone.
    const placed = await t.seedHost(b.workspace.id, { name: 'placed', createdAt: before });
    const provisioned = await t
      .client({ token: b.token })
      .POST('/api/v1/workspaces/{workspace}/infrastructure/runtime-environments/{environment}/tunnels', {
        params: { path: { workspace: b.workspace.slug, environment: 'main' } },
        body: { provider: 'local', runtime_instance_ids: [placed.id] },
      });
    expect(provisioned.response.status).toBe(200);
    const ours = new Set([edge.id, lower.id, upper.id, far.id]);

    const [one, two] = await Promise.all([backfill(), backfill()]);
    const created = [...one.created, ...two.created].filter((row) => ours.has(row.runtime_instance_id));
    expect(created.map((row) => row.runtime_instance_id).sort()).toEqual([...ours].sort());
    expect(created.find((row) => row.runtime_instance_id === edge.id)?.name).toBe('edge-01');
    expect(
      created
        .filter((row) => row.runtime_instance_id === lower.id || row.runtime_instance_id === upper.id)
        .map((row) => row.name)
        .sort(),
    ).toEqual(['alpha', 'alpha-2']);
    expect(one.created.some((row) => row.runtime_instance_id === placed.id)).toBe(false);
    expect(two.created.some((row) => row.runtime_instance_id === placed.id)).toBe(false);
    expect([...one.created, ...two.created].some((row) => row.runtime_instance_id === recent.id)).toBe(false);

    const environments = await snapshot();
    const again = await backfill();
    expect(again.created).toEqual([]);
    expect(again.skipped).toBe(0);
    expect(again.placed).toBe(await t.database.prisma.runtimeEnvironmentHost.count());
    expect(await snapshot()).toEqual(environments);
    expect(
      await t.database.prisma.runtimeEnvironmentHost.count({ where: { runtimeInstanceId: recent.id } }),
    ).toBe(0);
    expect(
      await t.database.prisma.auditEvent.count({
        where: {
          action: 'runtime_environment.backfilled',
          targetId: { in: environments.map((env) => env.id) },
        },
      }),
    ).toBe(ours.size);

    const listed = await listEnvironments(a);
    const edgeEnv = listed.find((env) => env.backfilled_from_host_id === edge.id)!;
    expect(edgeEnv).toMatchObject({
      name: 'edge-01',
      hosts: [{ runtime_instance_id: edge.id, name: 'Edge.01' }],
      tunnel: {
        provider: 'external',
        state: 'active',
        console_hostname: 'console.edge-01.example.test',
        relay_hostname: 'relay.edge-01.example.test',
        console_public_base_url: 'https://console.edge-01.example.test',
        relay_public_base_url: 'https://relay.edge-01.example.test',
        tunnel_id: null,
      },
    });
    expect((await listEnvironments(b)).map((env) => env.name).sort()).toEqual(['far-away', 'main']);

    // Runtime config and Networks keep the URLs the host had, now named by its environment.
    const config = unwrap(
      await t.client({ token: a.token }).GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
        params: { path: { workspace: a.workspace.slug }, query: { runtime_instance_id: edge.id } },
      }),
    );
    expect(config.consoleRouter.publicBaseUrl).toBe('https://console.edge-01.example.test');
    expect(config.tunnel).toMatchObject({
      runtime_environment: 'edge-01',
      provider: 'external',
      state: 'active',
    });
  });

  test('when a hub process starts, then its backfill job places the hosts from before runtime environments that have none yet', async () => {
    const owner = await t.seedMember('owner');
    const host = await t.seedHost(owner.workspace.id, {
      name: 'late-host',
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    const job = startRuntimeEnvironmentBackfill(t.hub.deps, { retryMs: 100 });
    await job.done;
    job.stop();
    const [env] = await listEnvironments(owner);
    expect(env).toMatchObject({
      name: 'late-host',
      backfilled_from_host_id: host.id,
      tunnel: { provider: 'external', state: 'active' },
    });
  });
});
