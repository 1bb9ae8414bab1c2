import { canonicalHash, canonicalJson } from './canonical-json';

describe('canonical JSON', () => {
  test('when keys come in another order at any depth, then the text and hash are the same', () => {
    const a = { b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } };
    const b = { a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 };
    expect(canonicalJson(a)).toBe(canonicalJson(b));
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(canonicalHash(a)).toBe(canonicalHash(b));
  });

  test('when array order or a value differs, then the hash differs; undefined members are left out', () => {
    expect(canonicalHash([1, 2])).not.toBe(canonicalHash([2, 1]));
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });
});
