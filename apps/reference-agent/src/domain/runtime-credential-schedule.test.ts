import { refreshDelayMs } from './runtime-credential-schedule';

describe('refreshDelayMs', () => {
  it('when a credential was just obtained, then it is refreshed at two thirds of its life', () => {
    expect(refreshDelayMs(1_000, 1_000 + 900_000, 1_000)).toBe(600_000);
    expect(refreshDelayMs(0, 60_000, 0)).toBe(40_000);
  });

  it('when time has passed since it was obtained, then the delay counts from the same refresh point', () => {
    expect(refreshDelayMs(0, 60_000, 30_000)).toBe(10_000);
  });

  it('when the refresh point has passed or the credential has expired, then it is refreshed at once', () => {
    expect(refreshDelayMs(0, 60_000, 50_000)).toBe(0);
    expect(refreshDelayMs(0, 60_000, 90_000)).toBe(0);
    expect(refreshDelayMs(10_000, 5_000, 10_000)).toBe(0);
  });

  it('when the expiry is far away, then the delay stays within what a timer can wait', () => {
    expect(refreshDelayMs(0, 10 * 365 * 24 * 3600 * 1000, 0)).toBe(2 ** 31 - 1);
  });
});
