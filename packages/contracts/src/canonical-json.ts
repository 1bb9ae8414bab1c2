/**
 * JSON with object keys sorted at every depth (arrays keep their order, `undefined` members are left out), so
 * equal values always serialize alike — the basis of idempotency fingerprints and content identities. The one
 * implementation: the SDK hashes with it and so does the server, byte for byte. Pure (no Node.js modules).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
