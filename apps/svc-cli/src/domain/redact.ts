/**
 * Redaction for anything that may be pasted into an issue (spec, Authentication rule 5): tokens, API keys,
 * provider credentials, relay and service-token values. Two nets: by field name, and by value shape
 * (JWTs, `svc_` keys, `whsec_` secrets, `Bearer …`) so a secret under an unexpected name is caught too.
 */
export const REDACTED = '[redacted]';

const SECRET_FIELD =
  /(token|secret|password|passwd|api[-_]?key|apikey|credential|private[-_]?key|authorization|cookie|session)/i;
/** Field names that look secret by the pattern but only hold facts about a secret. */
const SAFE_FIELD = /(_at|_expires_at|expires|_source|_id|_ids|last4|_present|_file|_path|_mode|scopes)$/i;

const SECRET_VALUES: RegExp[] = [
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, // JWT
  /\bsvc_[A-Za-z0-9_-]{16,}/g, // workspace API keys
  /\bwhsec_[A-Za-z0-9+/=_-]{16,}/g, // delivery signing secrets
  /\bBearer\s+[A-Za-z0-9._~+/=-]{16,}/gi,
];

/** Replaces secret-looking substrings of free text. */
export function redactText(text: string): string {
  let out = text;
  for (const pattern of SECRET_VALUES) out = out.replace(pattern, REDACTED);
  return out;
}

export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name) && !SAFE_FIELD.test(name);
}

/** A deep copy of `value` with every secret replaced by {@link REDACTED}. */
export function redact<T>(value: T): T {
  return walk(value, undefined) as T;
}

function walk(value: unknown, field: string | undefined): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') {
    if (field !== undefined && isSecretField(field) && value.length > 0) return REDACTED;
    return redactText(value);
  }
  if (Array.isArray(value)) return value.map((item) => walk(item, field));
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
      out[key] =
        isSecretField(key) && (typeof inner === 'string' || typeof inner === 'number') && inner !== ''
          ? REDACTED
          : walk(inner, key);
    }
    return out;
  }
  return value;
}
