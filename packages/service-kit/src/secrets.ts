/**
 * Patterns of every secret the platform handles. Used by the logger and by evidence redaction, so a secret
 * that slips into a free-text field is still masked.
 */
const SECRET_PATTERNS: { pattern: RegExp; replace: string }[] = [
  // Workspace API keys: keep the public prefix so operators can still tell keys apart.
  { pattern: /\bsvc_([a-z0-9]{12})_[A-Za-z0-9_-]{16,}/g, replace: 'svc_$1_[REDACTED]' },
  // JWTs (participant, agent, service tokens).
  { pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, replace: '[REDACTED_JWT]' },
  { pattern: /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, replace: '$1 [REDACTED]' },
  // Delivery signing secrets and opaque platform tokens (relay, service, runtime credentials).
  { pattern: /\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, replace: 'whsec_[REDACTED]' },
  { pattern: /\b(rly|svs|rtc|prv)_[A-Za-z0-9_-]{16,}/g, replace: '$1_[REDACTED]' },
  // Provider credentials and repository tokens.
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replace: 'sk-[REDACTED]' },
  { pattern: /\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}/g, replace: '$1_[REDACTED]' },
  { pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replace: 'github_pat_[REDACTED]' },
  {
    pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
    replace: '[REDACTED_PRIVATE_KEY]',
  },
  // Passwords inside connection URLs.
  { pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^:/?#\s@]+):[^@/\s]+@/gi, replace: '$1:[REDACTED]@' },
];

/** Field names whose values are always secret, wherever they appear. */
export const SECRET_FIELD_NAMES = [
  'authorization',
  'password',
  'password_hash',
  'passwordHash',
  'token',
  'access_token',
  'refresh_token',
  'agent_token',
  'api_key',
  'apiKey',
  'key',
  'secret',
  'client_secret',
  'signing_secret',
  'secretHash',
  'relay_token',
  'relayToken',
  'service_token',
  'serviceToken',
  'workspace_api_key',
  'private_key',
  'privateKeyPem',
  'provider_credential',
  'credential',
  'credentials',
  'x-api-key',
  'x-svc-relay-token',
  'x-svc-service-token',
  'cookie',
  'set-cookie',
];

/** Masks every known secret shape inside a string. */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const { pattern, replace } of SECRET_PATTERNS) out = out.replace(pattern, replace);
  return out;
}

const secretFields = new Set(SECRET_FIELD_NAMES.map((n) => n.toLowerCase()));

/**
 * Deep copy of a JSON-like value with secret fields replaced by `[REDACTED]` and secret shapes masked in
 * strings. Cycles and depth beyond `maxDepth` are cut.
 */
export function redactValue(value: unknown, maxDepth = 8): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return scrubSecrets(v);
    if (typeof v !== 'object' || v === null) return v;
    if (seen.has(v)) return '[Circular]';
    if (v instanceof Error) {
      seen.add(v);
      const own = walk({ ...v }, depth + 1) as Record<string, unknown>;
      const cause = (v as { cause?: unknown }).cause;
      return {
        type: v.name,
        message: scrubSecrets(v.message),
        ...(v.stack ? { stack: scrubSecrets(v.stack) } : {}),
        ...own,
        ...(cause !== undefined ? { cause: walk(cause, depth + 1) } : {}),
      };
    }
    if (depth >= maxDepth) return '[Truncated]';
    seen.add(v);
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) {
      out[k] =
        secretFields.has(k.toLowerCase()) && item !== null && item !== undefined
          ? '[REDACTED]'
          : walk(item, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}
