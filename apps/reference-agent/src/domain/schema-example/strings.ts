import { formatValue } from './formats';
import { matchesPattern, samplePattern } from './sample-pattern';
import type { Context, Position, Schema } from './schema';
import { codePoints, humanize, textFor } from './text';

const FILLER = 'Prepared by the reference agent.';

/** Pads (with a neutral sentence) or cuts `text` so its length in code points is within the bounds. */
function fitLength(text: string, minLength: number, maxLength: number): string {
  let chars = codePoints(text);
  while (chars.length < minLength) chars = codePoints(`${chars.join('')}${chars.length ? ' ' : ''}${FILLER}`);
  if (chars.length > maxLength) {
    chars = chars.slice(0, maxLength);
    const trimmed = chars.join('').trimEnd();
    if (codePoints(trimmed).length >= minLength) return trimmed;
  }
  return chars.join('');
}

/** A string: its `format`, else text from the field's name, fitted to the lengths and to `pattern`. */
export function stringValue(s: Schema, ctx: Context, where: Position): string {
  const minLength = typeof s.minLength === 'number' ? s.minLength : 0;
  const maxLength = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
  const lengthOk = (value: string) => {
    const length = codePoints(value).length;
    return length >= minLength && length <= maxLength;
  };
  const formatted = typeof s.format === 'string' ? formatValue(s.format, ctx, where, minLength) : undefined;
  const text = formatted ?? fitLength(textFor(where.key, ctx.intent, where.variant), minLength, maxLength);

  if (typeof s.pattern !== 'string') return text;
  const pattern = s.pattern;
  if (matchesPattern(pattern, text) && lengthOk(text)) return text;
  const examples = Array.isArray(s.examples) ? s.examples : [];
  // The text reshaped as identifiers often satisfies name-like patterns (`^[a-z][a-z0-9-]*$`).
  const words = [
    ...humanize(where.key).split(' '),
    ...(where.variant > 0 ? [String(where.variant + 1)] : []),
  ];
  const identifiers = [words.join('-'), words.join('_'), words.join(''), words.join('_').toUpperCase()];
  const candidates: unknown[] = [
    examples[0],
    s.default,
    ...examples.slice(1),
    ...identifiers,
    samplePattern(pattern, where.variant, { minLength, maxLength }),
    samplePattern(pattern, 0, { minLength, maxLength }),
  ];
  for (const candidate of candidates) {
    if (typeof candidate === 'string' && matchesPattern(pattern, candidate) && lengthOk(candidate)) {
      return candidate;
    }
  }
  // Nothing fits both the pattern and the lengths: the pattern is the stricter promise.
  return samplePattern(pattern, where.variant, { minLength, maxLength }) ?? text;
}
