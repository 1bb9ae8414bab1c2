/**
 * Who may address the router: DNS-rebinding and cross-site WebSocket rules. The router listens on loopback
 * and a tunnel carries its public host to it, so a `Host` that is neither loopback nor that public host is
 * a page of some other site reaching a loopback daemon through a rebound name; a WebSocket upgrade whose
 * `Origin` is neither the public origin nor a loopback page is another site trying to open a terminal.
 */

export interface OriginRules {
  /** `host[:port]` of the public base URL, lower case (undefined: loopback only). */
  publicHost?: string | undefined;
  /** Origin of the public base URL (`https://console.example.test`). */
  publicOrigin?: string | undefined;
  /**
   * Other origins whose pages may open WebSockets (e.g. the control web app's), lower case. They are allowed as
   * `Origin` only, never as `Host`: the router is still addressed by loopback or its public host.
   */
  pageOrigins?: ReadonlySet<string> | undefined;
}

export function originRules(
  publicBaseUrl: string | undefined,
  pageOrigins: readonly string[] = [],
): OriginRules {
  const pages =
    pageOrigins.length > 0 ? { pageOrigins: new Set(pageOrigins.map((o) => o.toLowerCase())) } : {};
  if (!publicBaseUrl) return pages;
  const url = new URL(publicBaseUrl);
  return { publicHost: url.host.toLowerCase(), publicOrigin: url.origin.toLowerCase(), ...pages };
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** `name` or `name:port` of a Host header, or the host of an origin URL, names the loopback interface. */
function isLoopbackHostname(hostname: string): boolean {
  const name = hostname.toLowerCase();
  return LOOPBACK_NAMES.has(name) || /^127(\.\d{1,3}){3}$/.test(name) || name.endsWith('.localhost');
}

function hostnameOf(host: string): string | undefined {
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return undefined;
  }
}

export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false;
  const hostname = hostnameOf(host);
  return hostname !== undefined && isLoopbackHostname(hostname);
}

/** The request's `Host` is loopback or the public host. */
export function isAllowedHost(host: string | undefined, rules: OriginRules): boolean {
  if (!host) return false;
  if (isLoopbackHost(host)) return true;
  return rules.publicHost !== undefined && host.toLowerCase() === rules.publicHost;
}

/** Most distinct `Host` values {@link hostCheck} remembers before it starts over. */
const HOST_MEMO_SIZE = 256;

/**
 * {@link isAllowedHost} for every request: the verdict per `Host` value is remembered (a client sends the same
 * one on every request), so the header is parsed once rather than per request. Bounded: a flood of distinct
 * values only empties the memo.
 */
export function hostCheck(rules: OriginRules): (host: string | undefined) => boolean {
  const memo = new Map<string, boolean>();
  return (host) => {
    if (!host) return false;
    const known = memo.get(host);
    if (known !== undefined) return known;
    const allowed = isAllowedHost(host, rules);
    if (memo.size >= HOST_MEMO_SIZE) memo.clear();
    memo.set(host, allowed);
    return allowed;
  };
}

/** The remote address is the loopback interface (IPv4, IPv6 or IPv4-mapped). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(address);
}

/** A WebSocket `Origin` the router accepts: the public origin, a configured page origin, or a loopback page. */
export function isAllowedOrigin(origin: string | undefined, rules: OriginRules): boolean {
  if (!origin) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.origin.toLowerCase() !== origin.toLowerCase().replace(/\/+$/, '')) return false;
  const lower = url.origin.toLowerCase();
  if (rules.publicOrigin !== undefined && lower === rules.publicOrigin) return true;
  if (rules.pageOrigins?.has(lower)) return true;
  return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHostname(url.hostname);
}
