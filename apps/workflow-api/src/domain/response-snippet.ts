import { SECRET_FIELD_NAMES, scrubSecrets } from '@svc/service-kit';

const names = SECRET_FIELD_NAMES.map((n) => n.replace(/[-]/g, '\\-')).join('|');
/** `"password": "…"` in JSON (also cut off at the 2 KiB end), whatever its case. */
const JSON_FIELD = new RegExp(`("(?:${names})"\\s*:\\s*)"(?:[^"\\\\]|\\\\.)*("|$)`, 'gi');
/** `token=…` in a form or query string, `Authorization: …` in an echoed header block. */
const PAIR = new RegExp(`(^|[\\s&?;,{(])((?:${names})\\s*[=:]\\s*)(?!\\[REDACTED)[^\\s&;,"}]+`, 'gim');

/**
 * A receiver's answer as kept on an attempt and shown to people: every secret shape the platform knows and the
 * value of every secret-named field masked, so a receiver that echoes a request (with its signature headers,
 * a key or a password) does not put it on a page.
 */
export function redactResponseSnippet(text: string): string {
  return scrubSecrets(text)
    .replace(JSON_FIELD, (_m, head: string, end: string) => `${head}"[REDACTED]${end === '"' ? '"' : ''}`)
    .replace(PAIR, '$1$2[REDACTED]');
}
