/** Free text for string fields, chosen by the field's name and filled from the intent. */

export function codePoints(text: string): string[] {
  return Array.from(text);
}

function normalizedKey(key: string | undefined): string {
  return (key ?? '').toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function humanize(key: string | undefined): string {
  const words = (key ?? '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .trim()
    .toLowerCase();
  return words || 'value';
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function capitalize(text: string): string {
  const [first, ...rest] = codePoints(text);
  return first === undefined ? '' : first.toUpperCase() + rest.join('');
}

/** The first sentence or line of the intent, at most 80 characters. */
function titleFrom(intent: string): string {
  const firstSentence = intent.split(/(?<=[.!?])\s|\n/)[0] ?? intent;
  const chars = codePoints(collapse(firstSentence));
  const title = chars.length > 80 ? `${chars.slice(0, 79).join('').trimEnd()}…` : chars.join('');
  return capitalize(title.replace(/[.!?]+$/, ''));
}

/** Field names that carry the request itself, exactly or as a suffix (`user_prompt`). */
const INTENT_NAMES = ['intent', 'request', 'prompt', 'query', 'question', 'task', 'ask', 'goal', 'objective'];
const INTENT_SUFFIXES = ['intent', 'prompt', 'question', 'query', 'request'];
/** Field names that title the result. */
const TITLE_NAMES = ['name', 'label', 'topic', 'caption', 'heading'];
const TITLE_SUFFIXES = ['title', 'headline', 'subject'];
/** Field names that describe the result in a sentence, wherever they occur in the name. */
const SUMMARY_PARTS = ['summary', 'description', 'overview', 'abstract', 'synopsis', 'tldr', 'digest'];

/** Free text for a field, chosen by its name. */
export function textFor(key: string | undefined, intent: string, variant: number): string {
  const name = normalizedKey(key);
  const cleanIntent = collapse(intent);
  const suffix = variant > 0 ? ` (${variant + 1})` : '';
  if (cleanIntent) {
    if (INTENT_NAMES.includes(name) || INTENT_SUFFIXES.some((k) => name.endsWith(k)))
      return cleanIntent + suffix;
    if (TITLE_NAMES.includes(name) || TITLE_SUFFIXES.some((k) => name.endsWith(k))) {
      return titleFrom(cleanIntent) + suffix;
    }
    if (SUMMARY_PARTS.some((k) => name.includes(k))) {
      return `${capitalize(humanize(key))} of the work done for: ${cleanIntent}${suffix}`;
    }
  }
  return `Example ${humanize(key)}${suffix}`;
}
