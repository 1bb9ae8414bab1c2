import { decideRestart, RESTART_TIMINGS, wantsRestart } from '../src/domain/restart-policy';
import type { FailureHistory } from '../src/domain/restart-policy';

const crash = { code: 1, signal: null };
const fresh: FailureHistory = { failures: [], consecutive: 0 };

describe('restart policy', () => {
  it('when quick failures follow each other, then the back-off doubles from 1 s and five within 60 s give up', () => {
    let history = fresh;
    const delays: number[] = [];
    let now = 1_000_000;
    for (let i = 0; i < 4; i += 1) {
      const decision = decideRestart(history, crash, 500, now, true);
      expect(decision.action).toBe('restart');
      if (decision.action === 'restart') delays.push(decision.delayMs);
      history = decision.history;
      now += 2_000;
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(decideRestart(history, crash, 500, now, true).action).toBe('give-up');
    // The runtime's own services are never given up on.
    expect(decideRestart(history, crash, 500, now, false).action).toBe('restart');
  });

  it('when failures keep coming, then the back-off stops growing at 60 s', () => {
    let history = fresh;
    let last = 0;
    for (let i = 0; i < 12; i += 1) {
      const decision = decideRestart(history, crash, 500, i * 61_000, false);
      if (decision.action === 'restart') last = decision.delayMs;
      history = decision.history;
    }
    expect(last).toBe(RESTART_TIMINGS.maxDelayMs);
  });

  it('when failures are more than 60 s apart or the process ran long, then it neither gives up nor keeps the long back-off', () => {
    let history = fresh;
    for (let i = 0; i < 10; i += 1) {
      const decision = decideRestart(history, crash, 500, i * 61_000, true);
      expect(decision.action).toBe('restart');
      history = decision.history;
    }
    const afterHealthyRun = decideRestart(history, crash, RESTART_TIMINGS.healthyRunMs, 10 * 61_000, true);
    expect(afterHealthyRun).toMatchObject({ action: 'restart', delayMs: 1_000 });
  });

  it('when the policy is checked, then on-failure restarts only failures, always restarts everything, never nothing', () => {
    const clean = { code: 0, signal: null };
    const killed = { code: null, signal: 'SIGKILL' };
    expect([
      wantsRestart('on-failure', clean),
      wantsRestart('on-failure', crash),
      wantsRestart('on-failure', killed),
    ]).toEqual([false, true, true]);
    expect([wantsRestart('always', clean), wantsRestart('never', crash)]).toEqual([true, false]);
  });
});
