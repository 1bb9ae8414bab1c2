import { AGENT_HEARTBEAT_FRESH_SECONDS, matchesRunningFilter } from './host-readiness';

describe('matchesRunningFilter', () => {
  const now = new Date('2026-11-28T12:00:00.000Z');
  const ago = (ms: number) => new Date(now.getTime() - ms);
  const fresh = AGENT_HEARTBEAT_FRESH_SECONDS * 1000;

  test('a running status with a heartbeat newer than the window, as the database filter decides', () => {
    expect(matchesRunningFilter({ status: 'idle', lastHeartbeatAt: ago(1000) }, now)).toBe(true);
    expect(matchesRunningFilter({ status: 'busy', lastHeartbeatAt: ago(fresh - 1) }, now)).toBe(true);
    // The filter is `last_heartbeat_at > now - window`: the boundary itself is not running.
    expect(matchesRunningFilter({ status: 'online', lastHeartbeatAt: ago(fresh) }, now)).toBe(false);
    expect(matchesRunningFilter({ status: 'online', lastHeartbeatAt: null }, now)).toBe(false);
    expect(matchesRunningFilter({ status: 'offline', lastHeartbeatAt: ago(1000) }, now)).toBe(false);
  });
});
