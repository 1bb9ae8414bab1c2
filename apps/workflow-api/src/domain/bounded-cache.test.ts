import { createBoundedCache } from './bounded-cache';

describe('createBoundedCache', () => {
  test('keeps what it was given and forgets the least recently used entry beyond its bound', () => {
    const cache = createBoundedCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    expect(cache.get('a')).toBe(1); // `b` is now the least recently used
    cache.set('c', 3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBe(1);
    expect(cache.get('c')).toBe(3);
    cache.set('a', 10);
    expect(cache.get('a')).toBe(10);
  });
});
