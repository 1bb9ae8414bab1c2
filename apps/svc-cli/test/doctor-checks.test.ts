import {
  clockSkewCheck,
  fileModesCheck,
  heartbeatCheck,
  localServiceUrl,
  participantExpiryCheck,
  runtimeConfigFreshnessCheck,
  runtimeInstanceIdCheck,
  runtimeKeyCheck,
  skewFromDateHeader,
  summarizeChecks,
  workdirRootCheck,
} from '../src/domain/doctor-checks';

const NOW = Date.parse('2026-11-24T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW - ms).toISOString();
const RTI = 'rti_01jabcdefghijkmnpqrstvwxyz';

describe('doctor checks', () => {
  it('when the host heartbeats on a superseded key, then runtime_key warns with who rotated it and until when it works', () => {
    const check = runtimeKeyCheck(RTI, {
      state: 'superseded',
      rotated_at: '2026-11-24T11:00:00.000Z',
      rotated_by: 'ops@example.com',
      valid_until: '2026-11-25T11:00:00.000Z',
    });
    expect(check).toEqual({
      id: 'runtime_key',
      status: 'warn',
      detail:
        "the host's heartbeats use a runtime key superseded at 2026-11-24T11:00:00.000Z by ops@example.com; it stops working at 2026-11-25T11:00:00.000Z",
      fix: 'svc config pull-runtime on this host (a running svc runtime up switches to the new key by itself)',
    });
  });

  it.each([
    ['current', 'pass'],
    ['other', 'pass'],
    ['unknown', 'pass'],
    ['revoked', 'fail'],
  ] as const)(
    'when the host heartbeats on a key the hub calls %p, then runtime_key is %p',
    (state, status) => {
      const check = runtimeKeyCheck(RTI, { state, rotated_at: null, rotated_by: null, valid_until: null });
      expect(check.status).toBe(status);
      if (status === 'pass') expect(check.detail).toBe(`the hub accepts the runtime key for ${RTI}`);
    },
  );

  it.each([
    [0, 'pass'],
    [4_900, 'pass'],
    [-4_900, 'pass'],
    [5_100, 'warn'],
    [-30_000, 'warn'],
    [60_000, 'warn'],
    [60_001, 'fail'],
    [-120_000, 'fail'],
  ])('when the hub clock is %p ms off, then clock_skew is %p', (skew, status) => {
    expect(clockSkewCheck(skew).status).toBe(status);
  });

  it('when the clock is off, then the detail says which way and the fix names NTP', () => {
    expect(clockSkewCheck(90_000)).toEqual({
      id: 'clock_skew',
      status: 'fail',
      detail: 'the local clock is 90.0 s behind the hub',
      fix: 'synchronize the clock (e.g. enable NTP: timedatectl set-ntp true)',
    });
    expect(clockSkewCheck(-7_000).detail).toBe('the local clock is 7.0 s ahead of the hub');
  });

  it('when the Date header is read, then the skew is measured against the middle of the round trip', () => {
    const sent = Date.parse('2026-11-24T12:00:10.000Z');
    // The hub said 12:00:20 (i.e. 12:00:20.0–20.999); the round trip took 200 ms.
    expect(skewFromDateHeader('Tue, 24 Nov 2026 12:00:20 GMT', sent, sent + 200)).toBe(10_400);
    expect(skewFromDateHeader(null, sent, sent)).toBeNull();
    expect(skewFromDateHeader('yesterday-ish', sent, sent)).toBeNull();
  });

  it.each([
    [ago(1_000), 'pass'],
    [ago(45_000), 'pass'],
    [ago(46_000), 'fail'],
    [null, 'fail'],
  ])('when the last host heartbeat was at %p, then heartbeat_fresh is %p', (at, status) => {
    expect(heartbeatCheck(at, NOW).status).toBe(status);
  });

  it('when the runtime config is older than 24 h, then it warns; missing config or secrets fail', () => {
    const both = { relayToken: true, workspaceApiKey: true };
    expect(runtimeConfigFreshnessCheck(ago(3600_000), both, NOW).status).toBe('pass');
    expect(runtimeConfigFreshnessCheck(ago(25 * 3600_000), both, NOW)).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('25 h ago'),
      fix: 'svc config pull-runtime',
    });
    expect(runtimeConfigFreshnessCheck(undefined, both, NOW).status).toBe('fail');
    expect(
      runtimeConfigFreshnessCheck(ago(1000), { relayToken: false, workspaceApiKey: true }, NOW),
    ).toMatchObject({
      status: 'fail',
      detail: 'the runtime env file lacks SVC_RELAY_TOKEN',
    });
  });

  it('when the participant token is close to its end, then it warns; after it, it fails', () => {
    expect(participantExpiryCheck(new Date(NOW + 3600_000).toISOString(), NOW).status).toBe('pass');
    expect(participantExpiryCheck(new Date(NOW + 5 * 60_000).toISOString(), NOW).status).toBe('warn');
    expect(participantExpiryCheck(ago(1), NOW).status).toBe('fail');
  });

  it.each([
    [undefined, 'fail', /not set/],
    ['wrt_bundle1', 'fail', /runtime bundle id/],
    ['host-a', 'fail', /not an inventory id/],
    ['rti_other', 'fail', /pulled runtime config is for/],
    [RTI, 'pass', new RegExp(RTI)],
  ])('when SVC_RUNTIME_INSTANCE_ID is %p, then the check is %p', (value, status, detail) => {
    const check = runtimeInstanceIdCheck(value, RTI);
    expect(check.status).toBe(status);
    expect(check.detail).toMatch(detail);
    if (status === 'fail') expect(check.fix).toBe(`export SVC_RUNTIME_INSTANCE_ID=${RTI}`);
  });

  it('when SVC_AGENT_WORKDIR_ROOT is compared, then a trailing slash does not matter and another root fails', () => {
    expect(workdirRootCheck('/srv/agents/', '/srv/agents').status).toBe('pass');
    expect(workdirRootCheck('/srv/other', '/srv/agents')).toMatchObject({
      status: 'fail',
      fix: 'export SVC_AGENT_WORKDIR_ROOT=/srv/agents',
    });
    expect(workdirRootCheck(undefined, '/srv/agents').status).toBe('fail');
  });

  it('when files and directories are looser than 0600 / 0700, then file_modes fails naming each with its chmod', () => {
    const check = fileModesCheck([
      { path: '/c', kind: 'dir', mode: 0o755 },
      { path: '/c/profiles/default.json', kind: 'file', mode: 0o600 },
      { path: '/c/profiles/default.runtime.env', kind: 'file', mode: 0o640 },
      { path: '/c/run/default', kind: 'dir', mode: null },
    ]);
    expect(check).toEqual({
      id: 'file_modes',
      status: 'fail',
      detail: '/c is 0755, /c/profiles/default.runtime.env is 0640',
      fix: 'chmod 700 /c; chmod 600 /c/profiles/default.runtime.env (the next svc write re-applies the modes too)',
    });
    expect(fileModesCheck([{ path: '/c', kind: 'dir', mode: 0o700 }]).status).toBe('pass');
  });

  it('when a service binds a wildcard address, then doctor reaches it on loopback', () => {
    expect(localServiceUrl('0.0.0.0', 8787)).toBe('http://127.0.0.1:8787');
    expect(localServiceUrl('::', 8790)).toBe('http://[::1]:8790');
    expect(localServiceUrl('10.0.0.5', 8790)).toBe('http://10.0.0.5:8790');
  });

  it('when checks are summarized, then warnings are counted apart from failures', () => {
    expect(
      summarizeChecks([
        clockSkewCheck(0),
        clockSkewCheck(10_000),
        clockSkewCheck(100_000),
        clockSkewCheck(1),
      ]),
    ).toEqual({ passed: 2, warned: 1, failed: 1 });
  });
});
