import { closeMatches } from './provider-models';

const CATALOG = [
  'anthropic/claude-haiku-4-5',
  'anthropic/claude-opus-4-1',
  'anthropic/claude-sonnet-4-5',
  'google/gemini-2.5-flash',
  'google/gemini-2.5-pro',
  'local/echo',
  'openai/gpt-4.1',
  'openai/gpt-5',
  'openai/gpt-5-mini',
];

describe('closeMatches', () => {
  test('when the provider prefix is missing, then the full identifier comes first', () => {
    expect(closeMatches('claude-sonnet-4-5', CATALOG)[0]).toBe('anthropic/claude-sonnet-4-5');
  });

  test('when the case differs, then the exact identifier is suggested first', () => {
    expect(closeMatches('Anthropic/Claude-Sonnet-4-5', CATALOG)[0]).toBe('anthropic/claude-sonnet-4-5');
  });

  test('when the identifier has a typo, then the intended one is suggested', () => {
    expect(closeMatches('openai/gtp-5', CATALOG)[0]).toBe('openai/gpt-5');
    expect(closeMatches('anthropic/claude-sonet-4-5', CATALOG)[0]).toBe('anthropic/claude-sonnet-4-5');
  });

  test('when a fragment of a model name is given, then the models containing it are suggested', () => {
    expect(closeMatches('sonnet', CATALOG)).toEqual(['anthropic/claude-sonnet-4-5']);
    expect(closeMatches('gemini', CATALOG)).toEqual(['google/gemini-2.5-pro', 'google/gemini-2.5-flash']);
  });

  test('when nothing is close, then there is no suggestion', () => {
    expect(closeMatches('mistral/large-2', CATALOG)).toEqual([]);
    expect(closeMatches('', CATALOG)).toEqual([]);
  });

  test('when many are close, then at most the limit is returned, best first and stable', () => {
    const matches = closeMatches('gpt-5', CATALOG);
    expect(matches[0]).toBe('openai/gpt-5');
    expect(matches.length).toBeLessThanOrEqual(3);
    expect(closeMatches('gpt-5', CATALOG)).toEqual(matches);
    expect(closeMatches('gpt', CATALOG, 1)).toHaveLength(1);
  });
});
