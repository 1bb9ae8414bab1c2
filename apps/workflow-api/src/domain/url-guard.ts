import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { AppError } from '@svc/service-kit';

/**
 * SSRF guard for delivery URLs. A subscriber URL is checked when it is saved and again before every send; the
 * sender then connects only to the addresses checked here (see transport/http-sender.ts), so a DNS answer that
 * changes between the check and the connection cannot redirect a delivery into the private network.
 */

export type DeliveryUrlErrorCode =
  | 'url_invalid'
  | 'url_scheme_not_allowed'
  | 'url_credentials_not_allowed'
  | 'url_host_not_allowed'
  | 'url_resolves_to_forbidden_address'
  | 'url_unresolvable';

/** A refused delivery URL. `message` (and the problem `detail`) never repeats the URL, which may carry secrets. */
export class DeliveryUrlError extends AppError {
  declare readonly code: DeliveryUrlErrorCode;

  constructor(code: DeliveryUrlErrorCode, message: string) {
    super({ status: 400, code, detail: message, message });
    this.name = 'DeliveryUrlError';
  }
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

export type DeliveryResolver = (host: string) => Promise<ResolvedAddress[]>;

export interface CheckDeliveryUrlOptions {
  /** Development only: loopback addresses (127/8, ::1) are allowed, over http as well as https. */
  allowLoopbackHttp: boolean;
  /** Name resolution; defaults to the system resolver (dns.lookup, all answers, in their order). */
  resolve?: DeliveryResolver;
}

export interface CheckedDeliveryUrl {
  url: URL;
  /** Every address the host resolved to, all allowed; the sender connects only to these. */
  addresses: ResolvedAddress[];
}

/** Longer URLs are refused outright; subscriber endpoints are never this long. */
const MAX_URL_LENGTH = 2048;

const systemResolve: DeliveryResolver = (host) => lookup(host, { all: true, verbatim: true });

export async function checkDeliveryUrl(
  raw: string,
  opts: CheckDeliveryUrlOptions,
): Promise<CheckedDeliveryUrl> {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH) {
    throw new DeliveryUrlError(
      'url_invalid',
      `The delivery URL must be an absolute URL of at most ${MAX_URL_LENGTH} characters.`,
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DeliveryUrlError('url_invalid', 'The delivery URL is not a valid absolute URL.');
  }
  const allowLoopback = opts.allowLoopbackHttp === true;
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowLoopback)) {
    throw new DeliveryUrlError('url_scheme_not_allowed', 'The delivery URL must use https.');
  }
  if (url.username !== '' || url.password !== '') {
    throw new DeliveryUrlError(
      'url_credentials_not_allowed',
      'The delivery URL must not contain a user name or password; deliveries are authenticated by their signature.',
    );
  }
  const host = bareHost(url.hostname);
  if (host === '') {
    throw new DeliveryUrlError('url_invalid', 'The delivery URL has no host.');
  }

  let addresses: ResolvedAddress[];
  const literalFamily = isIP(host);
  if (literalFamily !== 0) {
    addresses = [{ address: host, family: literalFamily }];
  } else {
    if (isForbiddenHostName(host, allowLoopback)) {
      throw new DeliveryUrlError('url_host_not_allowed', 'The delivery URL host is not allowed.');
    }
    addresses = await resolveHost(host, opts.resolve ?? systemResolve);
  }

  const checked: ResolvedAddress[] = [];
  let allLoopback = true;
  for (const { address } of addresses) {
    const kind = addressKind(address);
    if (kind === 'invalid') {
      throw new DeliveryUrlError(
        'url_unresolvable',
        'The delivery URL host did not resolve to a usable address.',
      );
    }
    if (kind === 'forbidden' || (kind === 'loopback' && !allowLoopback)) {
      throw new DeliveryUrlError(
        'url_resolves_to_forbidden_address',
        'The delivery URL host resolves to a private, loopback, link-local or reserved address.',
      );
    }
    if (kind !== 'loopback') allLoopback = false;
    checked.push({ address, family: isIP(address) });
  }
  if (url.protocol === 'http:' && !allLoopback) {
    throw new DeliveryUrlError('url_scheme_not_allowed', 'The delivery URL must use https.');
  }
  return { url, addresses: checked };
}

async function resolveHost(host: string, resolve: DeliveryResolver): Promise<ResolvedAddress[]> {
  let answers: ResolvedAddress[];
  try {
    answers = await resolve(host);
  } catch {
    throw new DeliveryUrlError('url_unresolvable', 'The delivery URL host could not be resolved.');
  }
  if (!Array.isArray(answers) || answers.length === 0) {
    throw new DeliveryUrlError('url_unresolvable', 'The delivery URL host could not be resolved.');
  }
  return answers;
}

/** `[::1]` → `::1`; a trailing root dot is dropped so `localhost.` is treated like `localhost`. */
function bareHost(hostname: string): string {
  const lower = hostname.toLowerCase();
  if (lower.startsWith('[') && lower.endsWith(']')) return lower.slice(1, -1);
  return lower.replace(/\.+$/, '');
}

/** Names refused before any lookup: loopback names (unless allowed) and cloud metadata / private-use zones. */
function isForbiddenHostName(host: string, allowLoopback: boolean): boolean {
  if (host === 'localhost' || host.endsWith('.localhost')) return !allowLoopback;
  if (host === 'metadata' || host === 'instance-data') return true;
  // `.internal` is reserved for private use; it holds metadata.google.internal and cloud-internal names.
  return host === 'internal' || host.endsWith('.internal');
}

// ---------------------------------------------------------------------------------------------------------------
// Address classification. Addresses are parsed to bytes and compared bit by bit against CIDR ranges.

export type AddressKind = 'public' | 'loopback' | 'forbidden' | 'invalid';

interface Cidr {
  bytes: Uint8Array;
  bits: number;
}

function cidr(text: string): Cidr {
  const [address, bits] = text.split('/');
  const bytes = address === undefined ? null : (parseIPv4(address) ?? parseIPv6(address));
  if (!bytes || bits === undefined) throw new Error(`bad CIDR ${text}`);
  return { bytes, bits: Number(bits) };
}

function inCidr(bytes: Uint8Array, range: Cidr): boolean {
  if (bytes.length !== range.bytes.length) return false;
  const whole = Math.floor(range.bits / 8);
  for (let i = 0; i < whole; i++) {
    if (bytes[i] !== range.bytes[i]) return false;
  }
  const rest = range.bits % 8;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] ?? 0) & mask) === ((range.bytes[whole] ?? 0) & mask);
}

const IPV4_LOOPBACK = cidr('127.0.0.0/8');
const IPV4_FORBIDDEN = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8', // private
  '100.64.0.0/10', // carrier-grade NAT
  '169.254.0.0/16', // link-local, including 169.254.169.254 (cloud metadata)
  '172.16.0.0/12', // private
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // former 6to4 relay anycast
  '192.168.0.0/16', // private
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, including 255.255.255.255 (broadcast)
].map(cidr);

const IPV6_LOOPBACK = cidr('::1/128');
const IPV6_FORBIDDEN = [
  '::/128', // unspecified
  '64:ff9b::/96', // NAT64 well-known prefix
  '64:ff9b:1::/48', // NAT64 local-use prefix
  '100::/64', // discard-only
  '2001::/32', // Teredo (the embedded client address is obfuscated, so it cannot be checked)
  '2001:db8::/32', // documentation
  'fc00::/7', // unique local
  'fe80::/10', // link-local
  'fec0::/10', // former site-local
  'ff00::/8', // multicast
].map(cidr);
/** ::ffff:a.b.c.d (mapped), ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated): the IPv4 inside decides. */
const IPV6_EMBEDDING_IPV4 = ['::ffff:0:0/96', '::/96', '::ffff:0:0:0/96'].map(cidr);
const IPV6_6TO4 = cidr('2002::/16');

/** Classifies an IP address string (IPv4 dotted quad or IPv6, with or without a zone id). */
export function addressKind(address: string): AddressKind {
  const bytes = parseIP(address);
  if (!bytes) return 'invalid';
  return bytes.length === 4 ? ipv4Kind(bytes) : ipv6Kind(bytes);
}

function ipv4Kind(bytes: Uint8Array): AddressKind {
  if (inCidr(bytes, IPV4_LOOPBACK)) return 'loopback';
  return IPV4_FORBIDDEN.some((range) => inCidr(bytes, range)) ? 'forbidden' : 'public';
}

function ipv6Kind(bytes: Uint8Array): AddressKind {
  if (inCidr(bytes, IPV6_LOOPBACK)) return 'loopback';
  if (IPV6_FORBIDDEN.some((range) => inCidr(bytes, range))) return 'forbidden';
  if (IPV6_EMBEDDING_IPV4.some((range) => inCidr(bytes, range))) return ipv4Kind(bytes.subarray(12, 16));
  // 6to4 carries an IPv4 address in bytes 2..5; a private one there reaches a private host through a relay.
  if (inCidr(bytes, IPV6_6TO4)) return ipv4Kind(bytes.subarray(2, 6)) === 'public' ? 'public' : 'forbidden';
  return 'public';
}

/** Bytes of an address (4 or 16), or null. An IPv6 zone id (`fe80::1%eth0`) is ignored. */
export function parseIP(address: string): Uint8Array | null {
  const text = address.trim();
  if (isIP(text) === 4) return parseIPv4(text);
  const zone = text.indexOf('%');
  const bare = zone === -1 ? text : text.slice(0, zone);
  return isIP(bare) === 6 ? parseIPv6(bare) : null;
}

function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] ?? '';
    if (!/^\d{1,3}$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[i] = value;
  }
  return bytes;
}

function parseIPv6(text: string): Uint8Array | null {
  let body = text;
  let embedded: Uint8Array | null = null;
  const lastColon = body.lastIndexOf(':');
  if (lastColon === -1) return null;
  if (body.slice(lastColon + 1).includes('.')) {
    embedded = parseIPv4(body.slice(lastColon + 1));
    if (!embedded) return null;
    body = `${body.slice(0, lastColon + 1)}0:0`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (!head || !tail) return null;
  let words: number[];
  if (halves.length === 1) {
    if (head.length !== 8) return null;
    words = head;
  } else {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return null;
    words = [...head, ...new Array<number>(missing).fill(0), ...tail];
  }
  const bytes = new Uint8Array(16);
  words.forEach((word, i) => {
    bytes[i * 2] = word >> 8;
    bytes[i * 2 + 1] = word & 0xff;
  });
  if (embedded) bytes.set(embedded, 12);
  return bytes;
}
