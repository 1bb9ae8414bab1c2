import { createRequestIds } from './request-ids';

describe('request ids', () => {
  test('when many ids are drawn, then none repeats, each carries the process prefix, and a good incoming id is kept', () => {
    const ids = createRequestIds();
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) seen.add(ids.next());
    expect(seen.size).toBe(100_000);
    const [first] = seen;
    expect(first).toMatch(/^req_[A-Za-z0-9_-]{12}1$/);
    expect(ids.of('client-chosen-id-1')).toBe('client-chosen-id-1');
    expect(ids.of('short')).toMatch(/^req_/);
    expect(ids.of(['a-list-of-ids', 'x'])).toMatch(/^req_/);
  });

  test('when two processes draw ids, then their prefixes differ', () => {
    expect(createRequestIds().next()).not.toBe(createRequestIds().next());
  });
});
