import { existsSync } from 'node:fs';
import path from 'node:path';
import { unwrap } from '@svc/contracts';
import { canCreateFleetNetwork, eventually, startFleet } from '@svc/testing';
import type { Fleet, FleetHost, FleetRun } from '@svc/testing';

/**
 * Drain end to end on a fleet of two hosts (each in a network namespace of its own when the tests run as root):
 * a run whose stage an agent of the draining host holds completes, its next stage and every later run go to the
 * other host, the drained host's agent stops, and the host shows draining, then drained; resume takes work again.
 */
jest.setTimeout(300_000);

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({ hosts: 2, netns: canCreateFleetNetwork(), stageDelayMs: 5_000 });
}, 240_000);
afterAll(async () => {
  await fleet?.close();
}, 60_000);

async function runWhen(id: string, predicate: (run: FleetRun) => boolean, timeoutMs = 120_000) {
  let last: FleetRun | undefined;
  return eventually(
    async () => {
      last = await fleet.readRun(id);
      return predicate(last) && last;
    },
    timeoutMs,
    `run ${id}`,
    { intervalMs: 500, describe: () => JSON.stringify(last) },
  );
}

const hostOf = (agentId: string | null | undefined): FleetHost | undefined =>
  fleet.hosts.find((h) => h.agentId === agentId);

test('when a host drains during a run, then the run completes with 0 failed stages, no new stage lands there, its agent stops and the host is drained', async () => {
  const first = await fleet.launchRun();
  const held = await runWhen(first, (run) => run.owners[0] !== null && run.owners[0] !== undefined);
  const draining = hostOf(held.owners[0])!;
  const other = fleet.hosts.find((h) => h !== draining)!;
  expect(draining).toBeDefined();

  const asked = await fleet.drainHost(draining);
  expect(['draining', 'drained']).toContain(asked.state);
  // New runs after the drain: every stage on the other host.
  const later = await fleet.launchRun();

  const done = await runWhen(first, (run) => run.state === 'completed' || run.state === 'failed');
  expect(done.state).toBe('completed');
  expect(done.stageStates).toEqual(['completed', 'completed']);
  expect(done.owners[0]).toBe(draining.agentId);
  expect(done.owners[1]).toBe(other.agentId);
  const next = await runWhen(later, (run) => run.state === 'completed' || run.state === 'failed');
  expect(next.state).toBe('completed');
  expect(next.owners).toEqual([other.agentId, other.agentId]);

  // The runtime saw the drain: the relay's marker exists, then its agent stops and the host is drained.
  const marker = path.join(draining.configDir, 'run', 'default', 'draining');
  await eventually(() => existsSync(marker), 60_000, 'the relay drain marker');
  await eventually(async () => (await fleet.drainState(draining)) === 'drained', 120_000, 'drained');
  const agent = unwrap(
    await fleet.hub.GET('/api/v1/agents/{agentId}', { params: { path: { agentId: draining.agentId } } }),
  );
  expect(agent.status).toBe('offline');
  const status = await draining.svc<{ runtime: { agents: unknown[] } }>(['internal', 'status']);
  expect(status.runtime.agents).toEqual([]);
  expect(draining.runtime?.output()).toMatch(/drain: agent fleet-agent-\d+ holds no stage; stopped/);
  expect(fleet.failedHeartbeats(draining)).toBe(0);

  // Resume: the host takes work again and the relay's marker is gone within a heartbeat.
  const resumed = await draining.svc<{ drain: { state: string } }>(['runtime', 'resume']);
  expect(resumed.drain.state).toBe('active');
  await eventually(() => !existsSync(marker), 30_000, 'the relay drain marker removed');

  // A drain, then a stop and a fresh `svc runtime up`: the host starts clean (active, no marker).
  expect((await fleet.drainHost(draining)).state).toBe('drained');
  await draining.runtime?.stop('SIGTERM', 60_000);
  await draining.startRuntime();
  expect(await fleet.drainState(draining)).toBe('active');
  expect(existsSync(marker)).toBe(false);
});
