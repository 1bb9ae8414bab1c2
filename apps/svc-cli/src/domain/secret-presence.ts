import { isSecretField, redactText } from './redact';

export type Presence = 'present' | 'absent';

/**
 * A deep copy of `value` in which every secret field (by the same names {@link isSecretField} knows) shows only
 * whether it is set: `present` or `absent`. Other strings still go through {@link redactText}, so a secret under
 * an unexpected name is caught by its shape. For `svc config show`.
 */
export function secretPresence<T>(value: T): unknown {
  return walk(value);
}

function presence(inner: unknown): Presence {
  return inner === null || inner === undefined || inner === '' ? 'absent' : 'present';
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map((item) => walk(item));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      out[key] =
        isSecretField(key) && (inner === null || typeof inner !== 'object' || Array.isArray(inner))
          ? presence(inner)
          : walk(inner);
    }
    return out;
  }
  return value;
}

/** `a.b.c  value` lines of a JSON-like value, for human output. */
export function flattenForDisplay(value: unknown, prefix = ''): Array<[string, string]> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return prefix ? [[prefix, '{}']] : [];
    return entries.flatMap(([key, inner]) => flattenForDisplay(inner, prefix ? `${prefix}.${key}` : key));
  }
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) return [[prefix, value.join(' ')]];
    return value.flatMap((inner, index) => flattenForDisplay(inner, `${prefix}[${index}]`));
  }
  return [[prefix, value === null || value === undefined ? '-' : String(value)]];
}
