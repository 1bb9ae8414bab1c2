/**
 * JSON with object keys sorted at every depth (arrays keep their order, `undefined` members are left out), so
 * equal values always serialize alike — the basis of idempotency fingerprints, content identities and an
 * artifact's `payload_sha256`. The one implementation: the server hashes with it, and the SDK's generator copies
 * this file into the SDK, so both agree byte for byte. Wire modules import nothing (no Node.js module, no other
 * file), so the copy compiles on its own in any runtime.
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
