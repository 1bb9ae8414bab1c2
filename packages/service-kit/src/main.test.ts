import { IDLE_COLLECT_DEFAULTS, collectGarbage, collectWhenIdle, shouldCollect } from './main';

const MB = 1024 * 1024;

describe('shouldCollect', () => {
  it('collects once the process is idle and no collection ran yet (start-up garbage)', () => {
    expect(shouldCollect({ heapUsed: 50 * MB, utilization: 0.01, heapUsedAfterLast: undefined })).toBe(true);
  });

  it('collects at idle when the heap grew by the garbage threshold since the last collection', () => {
    const after = 40 * MB;
    const threshold = IDLE_COLLECT_DEFAULTS.garbageBytes;
    expect(shouldCollect({ heapUsed: after + threshold, utilization: 0.01, heapUsedAfterLast: after })).toBe(
      true,
    );
    expect(
      shouldCollect({ heapUsed: after + threshold - 1, utilization: 0.01, heapUsedAfterLast: after }),
    ).toBe(false);
  });

  it('never collects while the event loop is busy, whatever the garbage', () => {
    expect(shouldCollect({ heapUsed: 500 * MB, utilization: 0.05, heapUsedAfterLast: 40 * MB })).toBe(false);
    expect(shouldCollect({ heapUsed: 500 * MB, utilization: 0.9, heapUsedAfterLast: undefined })).toBe(false);
  });

  it('follows the settings given', () => {
    const settings = { everyMs: 1000, garbageBytes: 1 * MB, idleBelow: 0.5 };
    expect(shouldCollect({ heapUsed: 42 * MB, utilization: 0.3, heapUsedAfterLast: 40 * MB }, settings)).toBe(
      true,
    );
    expect(shouldCollect({ heapUsed: 42 * MB, utilization: 0.6, heapUsedAfterLast: 40 * MB }, settings)).toBe(
      false,
    );
  });
});

describe('collectGarbage', () => {
  it('frees unreachable objects and prints no experimental warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({
        i,
        text: `item ${i}`,
      }));
      const before = process.memoryUsage().heapUsed;
      expect((garbage as unknown[]).length).toBe(200_000);
      garbage = undefined;
      await collectGarbage();
      const after = process.memoryUsage().heapUsed;
      // 200 000 small objects and strings are well over 8 MB; a full collection frees them.
      expect(before - after).toBeGreaterThan(8 * MB);
      await collectGarbage();
      expect(garbage).toBeUndefined();
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.includes('measureMemory'))).toEqual([]);
  });

  it('puts process.emitWarning back, so other warnings are printed as before', async () => {
    const emitWarning = process.emitWarning;
    await collectGarbage();
    expect(process.emitWarning).toBe(emitWarning);
  });
});

describe('collectWhenIdle', () => {
  it('returns a stop function and does not keep the process alive', () => {
    const stop = collectWhenIdle({ ...IDLE_COLLECT_DEFAULTS, everyMs: 60_000 });
    expect(typeof stop).toBe('function');
    stop();
  });
});
