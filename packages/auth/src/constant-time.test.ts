import { safeEqual } from './constant-time';

describe('safeEqual', () => {
  it('when both strings are identical, then they are equal', () => {
    expect(safeEqual('relay-secret', 'relay-secret')).toBe(true);
    expect(safeEqual('', '')).toBe(true);
  });

  it('when the strings differ in content, length or case, then they are not equal', () => {
    expect(safeEqual('relay-secret', 'relay-secreT')).toBe(false);
    expect(safeEqual('relay-secret', 'relay-secret ')).toBe(false);
    expect(safeEqual('a', '')).toBe(false);
    expect(safeEqual('x'.repeat(10_000), 'x'.repeat(9_999))).toBe(false);
  });

  it('when the strings contain multi-byte characters, then they are compared by content', () => {
    expect(safeEqual('clé-é', 'clé-é')).toBe(true);
    expect(safeEqual('clé-é', 'cle-e')).toBe(false);
  });
});
