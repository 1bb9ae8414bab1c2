/**
 * Hop-by-hop headers (RFC 9110 §7.6.1, plus the legacy `Proxy-Connection` and `Keep-Alive`), lower-cased: a
 * proxy never passes them on, in either direction.
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The header names a message's `Connection` header nominates as hop-by-hop (`Connection: keep-alive, x-foo`
 * → `x-foo`), lower-cased, from Node's flat `rawHeaders` array; `undefined` when it names none (nearly always).
 */
export function connectionNominated(rawHeaders: readonly string[]): Set<string> | undefined {
  let names: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.length !== 10 || rawHeaders[i]!.toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1]!.split(',')) {
      const name = token.trim().toLowerCase();
      if (name && name !== 'close' && name !== 'keep-alive') (names ??= new Set()).add(name);
    }
  }
  return names;
}
