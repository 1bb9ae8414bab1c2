import { isIP } from 'node:net';

/** The host name of a `Host` header (`name`, `name:port`, `[v6]` or `[v6]:port`), lower case; undefined when malformed. */
export function hostNameOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const value = header.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return undefined;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    return value.slice(1, end);
  }
  const match = /^([a-z0-9.-]+)(?::\d{1,5})?$/.exec(value);
  return match?.[1];
}

function isLoopback(name: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  if (isIP(name) === 4) return name.startsWith('127.');
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * Whether a request may be served for this `Host` (DNS rebinding): a loopback name or address, or one of the
 * relay's configured public host names. A missing or malformed header is refused.
 */
export function isAllowedHost(header: string | undefined, allowed: readonly string[]): boolean {
  const name = hostNameOf(header);
  if (name === undefined) return false;
  return isLoopback(name) || allowed.includes(name);
}
