import { chooseEncoding } from './content-encoding';
import type { StaticEncoding } from './content-encoding';

const both = new Set<StaticEncoding>(['br', 'gzip']);

describe('chooseEncoding', () => {
  test('when a browser accepts both, then brotli is chosen', () => {
    expect(chooseEncoding('gzip, deflate, br, zstd', both)).toBe('br');
  });

  test('when only gzip is accepted or only gzip is on disk, then gzip is chosen', () => {
    expect(chooseEncoding('gzip, deflate', both)).toBe('gzip');
    expect(chooseEncoding('gzip, br', new Set<StaticEncoding>(['gzip']))).toBe('gzip');
    expect(chooseEncoding('x-gzip', both)).toBe('gzip');
  });

  test('when weights are given, then the heavier wins and q=0 refuses', () => {
    expect(chooseEncoding('br;q=0.5, gzip;q=0.9', both)).toBe('gzip');
    expect(chooseEncoding('br;q=0, gzip;q=0', both)).toBeUndefined();
    expect(chooseEncoding('*;q=0', both)).toBeUndefined();
    expect(chooseEncoding('*', both)).toBe('br');
    expect(chooseEncoding('gzip, *;q=0', both)).toBe('gzip');
  });

  test('when nothing is accepted or nothing is on disk, then the file goes as it is', () => {
    expect(chooseEncoding(undefined, both)).toBeUndefined();
    expect(chooseEncoding('', both)).toBeUndefined();
    expect(chooseEncoding('identity', both)).toBeUndefined();
    expect(chooseEncoding('br, gzip', new Set())).toBeUndefined();
    expect(chooseEncoding('br;q=abc', both)).toBeUndefined();
  });
});
