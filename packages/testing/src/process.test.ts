import { eventually, fetchRefusesPort, freePort } from './process';
import { testRedisUrl } from './servers';

describe('freePort', () => {
  test('when ports are asked for one after another, then none is given twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    expect(ports.every((port) => port > 0 && port < 65_536)).toBe(true);
    expect(ports.some(fetchRefusesPort)).toBe(false);
  });

  test("when a port is on the list freePort skips, then Node's fetch refuses it indeed (a readiness probe there never answers)", async () => {
    expect(fetchRefusesPort(10_080)).toBe(true);
    expect(fetchRefusesPort(10_081)).toBe(false);
    const refusal = await fetch('http://127.0.0.1:10080/readyz').catch((error: Error) => error);
    expect((refusal as Error & { cause?: Error }).cause?.message).toBe('bad port');
  });
});

describe('eventually', () => {
  test('when the check answers a value after a few tries, then that value is returned', async () => {
    let calls = 0;
    const value = await eventually(() => (++calls >= 3 ? { calls } : undefined), 2_000, 'three calls', {
      intervalMs: 5,
    });
    expect(value).toEqual({ calls: 3 });
  });

  test('when the check answers a boolean, then true ends the wait', async () => {
    let ready = false;
    setTimeout(() => (ready = true), 30);
    await expect(eventually(() => ready, 2_000, 'ready', { intervalMs: 5 })).resolves.toBe(true);
  });

  test('when the check keeps failing, then the error names what was awaited, the last error and the description', async () => {
    const started = Date.now();
    await expect(
      eventually(
        () => {
          throw new Error('not yet');
        },
        200,
        'the row',
        { intervalMs: 20, describe: () => 'state: pending' },
      ),
    ).rejects.toThrow(/timed out after 200 ms waiting for the row \(last error: not yet\)\nstate: pending/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  });
});

describe('testRedisUrl', () => {
  const saved = process.env.TEST_REDIS_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.TEST_REDIS_URL;
    else process.env.TEST_REDIS_URL = saved;
  });

  test('when a database index is asked, then it replaces any index of the configured URL', () => {
    process.env.TEST_REDIS_URL = 'redis://10.0.0.5:6380/3';
    expect(testRedisUrl()).toBe('redis://10.0.0.5:6380/3');
    expect(testRedisUrl(7)).toBe('redis://10.0.0.5:6380/7');
    delete process.env.TEST_REDIS_URL;
    expect(testRedisUrl(8)).toBe('redis://127.0.0.1:6379/8');
  });
});
