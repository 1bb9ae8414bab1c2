import { HOP_BY_HOP_HEADERS, connectionNominated } from './hop-by-hop';

describe('hop-by-hop headers', () => {
  test('when a Connection header names headers, then those are returned lower-cased, close and keep-alive aside', () => {
    expect(
      connectionNominated(['Host', 'a', 'Connection', 'keep-alive, X-Foo , close,x-bar', 'X-Foo', '1']),
    ).toEqual(new Set(['x-foo', 'x-bar']));
  });

  test('when there is no Connection header or it names nothing else, then undefined', () => {
    expect(connectionNominated(['Host', 'a', 'User-Agent', 'b'])).toBeUndefined();
    expect(connectionNominated(['Connection', 'keep-alive'])).toBeUndefined();
  });

  test('the set holds the standard hop-by-hop names and no end-to-end one', () => {
    for (const name of ['connection', 'te', 'transfer-encoding', 'upgrade', 'proxy-authorization']) {
      expect(HOP_BY_HOP_HEADERS.has(name)).toBe(true);
    }
    expect(HOP_BY_HOP_HEADERS.has('content-length')).toBe(false);
  });
});
