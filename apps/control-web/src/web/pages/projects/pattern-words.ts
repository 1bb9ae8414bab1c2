/**
 * A regular expression of a contract document (`pattern` of a JSON Schema) in words a person can act on:
 * "use only lowercase letters, digits, dots, underscores and hyphens, starting with a letter or digit".
 * Patterns of the simple shapes the documents use are described exactly; any other is described as a format
 * (the field's hint says which), never shown as the expression itself.
 */

const SYMBOLS: Record<string, string> = {
  '.': 'dots',
  _: 'underscores',
  '-': 'hyphens',
  ':': 'colons',
  '+': 'plus signs',
  '@': 'at signs',
  '/': 'slashes',
};

/** `[…]` of a pattern (its inside), or undefined when it is not a plain class. */
function describeClass(inside: string): string | undefined {
  let rest = inside;
  const parts: string[] = [];
  const take = (range: string, words: string) => {
    if (rest.includes(range)) {
      rest = rest.replace(range, '');
      parts.push(words);
    }
  };
  if (rest.includes('A-Z') && rest.includes('a-z')) {
    rest = rest.replace('A-Z', '').replace('a-z', '');
    parts.push('letters');
  }
  take('a-z', 'lowercase letters');
  take('A-Z', 'capital letters');
  take('0-9', 'digits');
  take('a-f', 'the letters a to f');
  if (/^\\x20-\\x7E$/.test(rest)) return 'printable characters without accents';
  const symbols: string[] = [];
  for (const char of rest.replace(/\\/g, '')) {
    const name = SYMBOLS[char];
    if (!name) return undefined;
    symbols.push(name);
  }
  const all = [...parts, ...symbols];
  if (all.length === 0) return undefined;
  return all.length === 1 ? all[0] : `${all.slice(0, -1).join(', ')} and ${all[all.length - 1]}`;
}

/** "letters, digits" → "a letter or digit" for the first character. */
function singular(words: string): string {
  const one = words
    .replace('lowercase letters', 'lowercase letter')
    .replace('capital letters', 'capital letter')
    .replace(/\bletters\b/, 'letter')
    .replace('digits', 'digit')
    .replace(/, /g, ' or ')
    .replace(' and ', ' or ');
  return /^[aeiou]/.test(one) ? `an ${one}` : `a ${one}`;
}

/** The words for `pattern`, completing "<Field> must …" (without the leading "must"). */
export function describePattern(pattern: string): string {
  if (pattern === '\\S') return 'contain more than spaces';
  if (pattern === '^\\S+$') return 'have no spaces';
  // ^[first][rest]* or ^[first][rest]{0,n}$ or ^[only]+$ or ^[only]{n}$
  const two = /^\^\[([^\]]+)\]\[([^\]]+)\](\*|\{0,(\d+)\})\$$/.exec(pattern);
  if (two) {
    const first = describeClass(two[1]!);
    const rest = describeClass(two[2]!);
    if (first && rest) {
      const limit = two[4] ? `, at most ${Number(two[4]) + 1} characters` : '';
      return `use only ${rest}, starting with ${singular(first)}${limit}`;
    }
  }
  const one = /^\^\[([^\]]+)\](\+|\{(\d+)\})\$$/.exec(pattern);
  if (one) {
    const only = describeClass(one[1]!);
    if (only) return one[3] ? `be exactly ${one[3]} ${only}` : `use only ${only}`;
  }
  const prefixed = /^\^\[a-z\]\+_\[A-Za-z0-9\]\+\$$/.exec(pattern);
  if (prefixed)
    return 'be an id such as abc_01h2x3y4z5 (lowercase letters, an underscore, then letters and digits)';
  return 'be in the expected format';
}
