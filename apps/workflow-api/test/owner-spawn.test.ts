import {
  SPAWNED_AGENT_NOT_ONLINE,
  SPAWN_ONLINE_WITHIN_MS,
  judgeOwnerSpawn,
  ownerSpawnFailedBlocker,
} from '../src/domain/owner-spawn';
import type { StoredOwnerSpawn } from '../src/domain/owner-spawn';

/** How the engine judges the hub's spawn of a stage owner while the stage still has none. */
const startedAt = '2026-11-24T10:00:00.000Z';
const spawn = (over: Partial<StoredOwnerSpawn> = {}): StoredOwnerSpawn => ({
  spawn_id: 'spw_1',
  state: 'started',
  agent_name: 'report-1',
  agent_id: 'agt_1',
  runtime_instance_id: 'rti_1',
  requested_at: '2026-11-24T09:59:50.000Z',
  error_code: null,
  spawn_key: 'stg_1:owner:0:0',
  attempt: 0,
  finished_at: startedAt,
  ...over,
});
const at = (ms: number) => new Date(Date.parse(startedAt) + ms);

describe('judgeOwnerSpawn', () => {
  test('a started spawn whose agent has had less than the deadline to come online is still spawning', () => {
    const s = spawn();
    expect(judgeOwnerSpawn(s, at(SPAWN_ONLINE_WITHIN_MS - 1))).toBe(s);
  });

  test('a started spawn whose agent never took the stage within the deadline is a failed attempt', () => {
    const judged = judgeOwnerSpawn(spawn(), at(SPAWN_ONLINE_WITHIN_MS));
    expect(judged).toMatchObject({
      state: 'failed',
      error_code: SPAWNED_AGENT_NOT_ONLINE,
      attempt: 0,
      // The start time stays: the retry wait counts from it, so the next attempt is asked for at once.
      finished_at: startedAt,
    });
  });

  test.each(['requested', 'in_progress'] as const)(
    'a spawn still %s at the hub is left as the hub reports it, however long it takes',
    (state) => {
      const s = spawn({ state, finished_at: null });
      expect(judgeOwnerSpawn(s, at(10 * SPAWN_ONLINE_WITHIN_MS))).toBe(s);
    },
  );

  test('a spawn the hub failed keeps the hub’s error code', () => {
    const s = spawn({ state: 'failed', error_code: 'spawn_timeout' });
    expect(judgeOwnerSpawn(s, at(10 * SPAWN_ONLINE_WITHIN_MS))).toBe(s);
  });
});

describe('ownerSpawnFailedBlocker', () => {
  test('says the spawned agent started but never came online, rather than that the hub could not spawn it', () => {
    const judged = judgeOwnerSpawn(spawn(), at(SPAWN_ONLINE_WITHIN_MS));
    const blocker = ownerSpawnFailedBlocker('report', ['report'], judged);
    expect(blocker).toMatchObject({ code: 'stage_owner_spawn_failed', effect: 'waits_for_owner' });
    expect(blocker.message).toContain("agent 'report-1'");
    expect(blocker.message).toContain('did not come online');
  });
});
