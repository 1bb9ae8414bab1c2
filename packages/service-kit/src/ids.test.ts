import { newId } from './ids';

describe('newId', () => {
  test('when many ids are made, then each is prefixed, 26 Crockford characters long and unique, across refills of the random pool', () => {
    const ids = Array.from({ length: 10_000 }, () => newId('inv', 1_764_400_000_000));
    for (const id of ids) expect(id).toMatch(/^inv_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Same millisecond: the time part is shared, the random part differs.
    expect(new Set(ids.map((id) => id.slice(4, 14))).size).toBe(1);
    expect(new Set(ids.map((id) => id.slice(14))).size).toBe(ids.length);
  });

  test('when ids are made at later times, then they sort by time', () => {
    const times = [1_000, 2_000, 1_764_400_000_000, 1_764_400_000_001];
    const ids = times.map((t) => newId('run', t));
    expect([...ids].sort()).toEqual(ids);
  });
});
