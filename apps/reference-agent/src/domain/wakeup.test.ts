import { Wakeup } from './wakeup';

describe('Wakeup', () => {
  it('when notify is called, then a pending wait resolves before its timeout', async () => {
    const wakeup = new Wakeup();
    const began = Date.now();
    const waiting = wakeup.wait(10_000, new AbortController().signal);
    wakeup.notify();
    await waiting;
    expect(Date.now() - began).toBeLessThan(1_000);
  });

  it('when nothing notifies, then the wait resolves after its time', async () => {
    const began = Date.now();
    await new Wakeup().wait(30, new AbortController().signal);
    expect(Date.now() - began).toBeGreaterThanOrEqual(25);
  });

  it('when the signal aborts, or was aborted already, then the wait resolves at once', async () => {
    const wakeup = new Wakeup();
    const controller = new AbortController();
    const began = Date.now();
    const waiting = wakeup.wait(10_000, controller.signal);
    controller.abort();
    await waiting;
    expect(Date.now() - began).toBeLessThan(1_000);
    const again = Date.now();
    await wakeup.wait(10_000, controller.signal);
    expect(Date.now() - again).toBeLessThan(1_000);
  });
});
