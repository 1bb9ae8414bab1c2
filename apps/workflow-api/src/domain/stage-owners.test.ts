import { ownerCheckAfterMs, ownerGone, stallTimesOf, stalledOwners, withStall } from './stage-owners';

const entry = (agent_id: string, running: boolean, seen: string | null, status = 'online') => ({
  agent_id,
  running,
  status,
  last_heartbeat_at: seen,
});

describe('the agents a stage was taken from', () => {
  const takenAt = '2026-11-28T12:00:00.000Z';

  test('one that heartbeated at the hub after it was taken may have the stage again; one silent since may not', () => {
    const roster = [
      entry('agt_back', true, '2026-11-28T12:00:05.000Z'),
      entry('agt_silent', true, '2026-11-28T11:59:58.000Z'),
      entry('agt_lost', false, '2026-11-28T12:00:09.000Z', 'lost'),
    ];
    const times = { agt_back: takenAt, agt_silent: takenAt, agt_lost: takenAt };
    expect(stalledOwners(['agt_back', 'agt_silent', 'agt_lost', 'agt_gone'], times, roster)).toEqual({
      returned: ['agt_back'],
      excluded: ['agt_silent', 'agt_lost', 'agt_gone'],
    });
  });

  test('an agent taken before stall times were kept counts as taken at the start: any heartbeat is life', () => {
    expect(stalledOwners(['agt_old'], {}, [entry('agt_old', true, takenAt)])).toEqual({
      returned: ['agt_old'],
      excluded: [],
    });
  });

  test('stall times keep the latest time per agent and ignore what is not a time', () => {
    const at = new Date(takenAt);
    expect(withStall({ agt_a: '2026-01-01T00:00:00.000Z', bad: 3 }, 'agt_a', at)).toEqual({ agt_a: takenAt });
    expect(stallTimesOf(['x'])).toEqual({});
  });
});

describe('an owner the hub no longer counts as running', () => {
  test('is gone when lost, stopped or absent from the roster; kept while running', () => {
    const roster = [entry('agt_run', true, null), entry('agt_lost', false, null, 'lost')];
    expect(ownerGone(roster, 'agt_run')).toBeNull();
    expect(ownerGone(roster, 'agt_lost')).toMatchObject({ status: 'lost' });
    expect(ownerGone(roster, 'agt_other')).toBe('absent');
  });

  test('is asked about after half the stall window, never sooner than a second', () => {
    expect(ownerCheckAfterMs({ stallAfterMs: 60_000 })).toBe(30_000);
    expect(ownerCheckAfterMs({ stallAfterMs: 1_000 })).toBe(1_000);
  });
});
