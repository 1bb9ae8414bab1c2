import { createLogger } from '@svc/service-kit';
import { DEFAULT_RETRY_POLICY } from '../../domain/call-policy';
import { HubPresence } from './keep-hub-presence';
import type { HubStatus } from './keep-hub-presence';

const IDLE_DELAY_MS = 40;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function setup(initial: HubStatus = 'idle') {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({
    name: 'hub-presence-test',
    level: 'debug',
    destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const lifetime = new AbortController();
  const sent: HubStatus[] = [];
  let release: (() => void)[] = [];
  let fail = false;
  const state = { status: initial, hold: false };
  const hub = new HubPresence({
    api: {
      hubHeartbeat: (status) => {
        sent.push(status);
        if (fail) return Promise.reject(new Error('hub down'));
        if (!state.hold) return Promise.resolve({} as never);
        return new Promise((resolve) => release.push(() => resolve({} as never)));
      },
    },
    logger,
    policy: DEFAULT_RETRY_POLICY,
    secrets: ['secret-token'],
    lifetime: lifetime.signal,
    status: () => state.status,
    idleReportDelayMs: IDLE_DELAY_MS,
  });
  const releaseAll = () => {
    const pending = release;
    release = [];
    pending.forEach((resolve) => resolve());
  };
  return { hub, sent, state, lines, lifetime, releaseAll, failNext: () => (fail = true) };
}

/** An agent that reported idle at start and then busy (both sent). */
async function setupBusy() {
  const t = setup();
  await t.hub.send();
  t.state.status = 'busy';
  t.hub.statusChanged();
  await t.hub.idle();
  return t;
}

describe('HubPresence', () => {
  it('when heartbeats are asked while one is in flight, then they coalesce into one more with the latest status', async () => {
    const { hub, sent, state, releaseAll } = setup();
    state.hold = true;
    const first = hub.send();
    void hub.send();
    void hub.send();
    state.status = 'busy';
    releaseAll();
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    releaseAll();
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy']);
  });

  it('when the status is the one last reported, then statusChanged sends nothing; when it differs, then it sends at once', async () => {
    const { hub, sent, state, lines } = setup();
    await hub.send();
    hub.statusChanged();
    await hub.idle();
    expect(sent).toEqual(['idle']);
    state.status = 'busy';
    hub.statusChanged();
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy']);
    expect(lines.filter((line) => line.msg === 'hub heartbeat: status reported')).toHaveLength(2);
  });

  it('when work ends, then idle is reported only once the agent has stayed idle for the delay', async () => {
    const { hub, sent, state } = await setupBusy();
    state.status = 'idle';
    hub.statusChanged();
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy']);
    await sleep(IDLE_DELAY_MS * 3);
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy', 'idle']);
  });

  it('when work starts again within the delay (stage after stage), then no heartbeat is sent for the gap', async () => {
    const { hub, sent, state } = await setupBusy();
    for (let stage = 0; stage < 5; stage += 1) {
      state.status = 'idle';
      hub.statusChanged();
      await sleep(IDLE_DELAY_MS / 4);
      state.status = 'busy';
      hub.statusChanged();
    }
    await sleep(IDLE_DELAY_MS * 3);
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy']);
    hub.stopPeriodic();
  });

  it('when a stage starts and ends while its busy heartbeat is in flight, then idle follows after the delay', async () => {
    const { hub, sent, state, releaseAll } = setup();
    await hub.send();
    state.hold = true;
    state.status = 'busy';
    hub.statusChanged();
    state.status = 'idle';
    hub.statusChanged();
    state.hold = false;
    releaseAll();
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy']);
    await sleep(IDLE_DELAY_MS * 3);
    await hub.idle();
    expect(sent).toEqual(['idle', 'busy', 'idle']);
  });

  it('when the agent stops with idle pending, then it is not sent', async () => {
    const { hub, sent, state } = await setupBusy();
    state.status = 'idle';
    hub.statusChanged();
    hub.stopPeriodic();
    await sleep(IDLE_DELAY_MS * 3);
    expect(sent).toEqual(['idle', 'busy']);
  });

  it('when the agent has stopped, then statusChanged sends nothing', async () => {
    const { hub, sent, state, lifetime } = setup();
    lifetime.abort();
    state.status = 'busy';
    hub.statusChanged();
    await hub.idle();
    expect(sent).toEqual([]);
  });

  it('when a heartbeat fails, then a warning is logged and the next one is tried normally', async () => {
    const { hub, sent, lines, failNext } = setup();
    failNext();
    await hub.send();
    expect(sent).toEqual(['idle']);
    expect(lines.find((line) => line.msg === 'hub heartbeat failed')).toMatchObject({ status: 'idle' });
  });
});
