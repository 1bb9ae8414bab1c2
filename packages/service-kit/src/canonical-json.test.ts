import { canonicalHash } from './canonical-json';

describe('canonical hash', () => {
  test('when keys come in another order at any depth, then the hash is the same', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } };
    const b = { a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 };
    expect(canonicalHash(a)).toBe(canonicalHash(b));
    expect(canonicalHash(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  test('when array order or a value differs, then the hash differs; undefined members count as absent', () => {
    expect(canonicalHash([1, 2])).not.toBe(canonicalHash([2, 1]));
    expect(canonicalHash({ a: 1 })).not.toBe(canonicalHash({ a: 2 }));
    expect(canonicalHash({ a: undefined, b: 2 })).toBe(canonicalHash({ b: 2 }));
  });
});
