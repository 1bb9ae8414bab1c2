import { AppError } from './errors';
import type { FieldError } from './errors';

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
// eslint-disable-next-line no-control-regex -- matching NUL is the point of this rule
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, 'g');

/**
 * The one rule for text a request carries: NUL (U+0000) and unpaired UTF-16 surrogates are refused, because
 * PostgreSQL cannot store the first and JSON/UTF-8 cannot represent the second. Every other character,
 * including the other control characters (U+0001–U+001F, U+007F, U+0080–U+009F), is accepted and stored as
 * sent unless the field's own schema restricts it (e.g. a `pattern`).
 */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value);
}

/** A location segment for a key: JSON Pointer escaping, with the characters that are refused made visible. */
function segment(key: string): string {
  const visible = key.replace(UNSTORABLE_ALL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return visible.replace(/~/g, '~0').replace(/\//g, '~1');
}

const MAX_REPORTED = 20;

/**
 * Every string in `value` — values at any depth and object keys — that is not storable text, as field
 * errors located under `prefix` (`body/metadata/ke~1y`). A bad key is reported at the key's own location.
 */
export function findInvalidText(value: unknown, prefix: string): FieldError[] {
  const found: FieldError[] = [];
  const walk = (node: unknown, location: string, depth: number): void => {
    if (found.length >= MAX_REPORTED) return;
    if (typeof node === 'string') {
      if (!isStorableText(node)) {
        found.push({ location, message: 'contains a NUL character or an unpaired surrogate' });
      }
      return;
    }
    // Request bodies are parsed JSON (depth bounded by the body limit); the guard only stops cycles of
    // values built in code.
    if (typeof node !== 'object' || node === null || depth > 256) return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, `${location}/${index}`, depth + 1));
      return;
    }
    for (const key of Object.keys(node)) {
      const at = `${location}/${segment(key)}`;
      if (!isStorableText(key)) {
        found.push({ location: at, message: 'key contains a NUL character or an unpaired surrogate' });
        if (found.length >= MAX_REPORTED) return;
      }
      walk((node as Record<string, unknown>)[key], at, depth + 1);
    }
  };
  walk(value, prefix, 0);
  return found;
}

/** 400 `text_invalid` naming every field that holds text that cannot be stored. */
export function textInvalid(errors: FieldError[]): AppError {
  const first = errors[0] as FieldError;
  return new AppError({
    status: 400,
    code: 'text_invalid',
    detail: `${first.location} ${first.message}.`,
    extra: { errors },
  });
}

/** Throws 400 `text_invalid` when `value` holds text that cannot be stored. */
export function assertStorableText(value: unknown, prefix: string): void {
  const errors = findInvalidText(value, prefix);
  if (errors.length > 0) throw textInvalid(errors);
}
