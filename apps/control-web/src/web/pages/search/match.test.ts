import { matches } from './match';

describe('matches', () => {
  it('finds a record by its whole id or by part of a name, ignoring case', () => {
    expect(matches('agt_123', 'agt_123', 'Builder')).toBe(true);
    expect(matches('AGT_123', 'agt_123')).toBe(true);
    expect(matches('build', 'agt_123', 'Builder')).toBe(true);
    expect(matches('dev', 'prj_1', 'Research', 'DEV-2')).toBe(true);
  });

  it('does not match part of an id, an empty query or an unrelated name', () => {
    expect(matches('agt_12', 'agt_123', 'Builder')).toBe(false);
    expect(matches('  ', 'agt_123', 'Builder')).toBe(false);
    expect(matches('deploy', 'agt_123', 'Builder', null)).toBe(false);
  });
});
