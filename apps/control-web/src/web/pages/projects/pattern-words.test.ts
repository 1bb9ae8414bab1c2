import { describePattern } from './pattern-words';

describe('describePattern', () => {
  test('when a pattern has a first character and a rest, then both are said in words', () => {
    expect(describePattern('^[A-Za-z0-9][A-Za-z0-9._:-]*$')).toBe(
      'use only letters, digits, dots, underscores, colons and hyphens, starting with a letter or digit',
    );
    expect(describePattern('^[a-z0-9][a-z0-9._-]{0,99}$')).toBe(
      'use only lowercase letters, digits, dots, underscores and hyphens, starting with a lowercase letter or digit, at most 100 characters',
    );
    expect(describePattern('^[a-z][a-z0-9_]*$')).toBe(
      'use only lowercase letters, digits and underscores, starting with a lowercase letter',
    );
  });

  test('when a pattern is one class, then it says which characters', () => {
    expect(describePattern('^[A-Za-z0-9_-]+$')).toBe('use only letters, digits, underscores and hyphens');
    expect(describePattern('^[0-9a-f]{64}$')).toBe('be exactly 64 digits and the letters a to f');
    expect(describePattern('^[\\x20-\\x7E]+$')).toBe('use only printable characters without accents');
    expect(describePattern('^\\S+$')).toBe('have no spaces');
  });

  test('when a pattern is anything else, then no expression is shown', () => {
    const words = describePattern('^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$');
    expect(words).toBe('be in the expected format');
    for (const p of ['^[A-Za-z0-9][A-Za-z0-9._:-]*$', '^[a-z]+_[A-Za-z0-9]+$', '^(a|b)$'])
      expect(describePattern(p)).not.toMatch(/[\^$[\]\\]/);
  });
});
