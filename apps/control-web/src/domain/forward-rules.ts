/**
 * What the server forwards to the hub and the Workflow API: their public API (`/api/v1/…`) and their API
 * reference (`/docs…`), never an internal route; the headers a browser request may carry through; and the
 * headers of the answer that reach the browser.
 */

import { HOP_BY_HOP_HEADERS } from '@svc/service-kit';

export type UpstreamName = 'hub' | 'workflow';

/** Paths that are not forwarded although they are public: sign-in goes through `POST /session`. */
const WITHHELD = new Set(['/api/v1/auth/login']);

/**
 * The upstream path and query of a forwarded request (`/api/v1/me?x=1`), given the request's URL after its
 * `/hub` or `/workflow` prefix; undefined for anything that is not forwarded. Dot segments, encoded slashes
 * and dots, backslashes and empty segments are refused, so no spelling of a path reaches another route.
 */
export function forwardedPath(rest: string): string | undefined {
  const queryAt = rest.indexOf('?');
  const path = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const query = queryAt < 0 ? '' : rest.slice(queryAt);
  if (!/^\/(api\/v1(\/|$)|docs(\/|$))/.test(path)) return undefined;
  if (/\\|%2f|%5c|%2e|\/\/|\/\.{1,2}(\/|$)/i.test(path)) return undefined;
  if (WITHHELD.has(path.replace(/\/+$/, ''))) return undefined;
  return `${path}${query}`;
}

/** Request headers passed on as they are; everything else (cookies, API keys, service credentials) is dropped. */
const FORWARDED_REQUEST_HEADERS = [
  'accept',
  'accept-language',
  'content-type',
  'content-length',
  'content-encoding',
  'idempotency-key',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'last-event-id',
  'user-agent',
  'x-request-id',
  'x-svc-client',
  'traceparent',
  'tracestate',
];

export interface ForwardContext {
  /** The participant JWT of the session, when there is one. */
  token: string | undefined;
  clientAddress: string | undefined;
  /** Protocol and host the browser used (for `X-Forwarded-Proto`/`-Host`). */
  protocol: string;
  host: string | undefined;
}

export function upstreamRequestHeaders(
  incoming: Record<string, string | string[] | undefined>,
  context: ForwardContext,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_REQUEST_HEADERS) {
    const value = incoming[name];
    if (typeof value === 'string') headers[name] = value;
    else if (Array.isArray(value)) headers[name] = value.join(', ');
  }
  if (context.token) headers.authorization = `Bearer ${context.token}`;
  if (context.clientAddress) headers['x-forwarded-for'] = context.clientAddress;
  headers['x-forwarded-proto'] = context.protocol;
  if (context.host) headers['x-forwarded-host'] = context.host;
  return headers;
}

const DROPPED_RESPONSE_HEADERS = new Set([...HOP_BY_HOP_HEADERS, 'set-cookie', 'x-powered-by']);

/**
 * The answer's headers for the browser: hop-by-hop headers and cookies dropped, a `Location` on the upstream
 * rewritten to the forwarded prefix.
 */
export function browserResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  upstreamBase: string,
  prefix: string,
): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || DROPPED_RESPONSE_HEADERS.has(name.toLowerCase())) continue;
    out[name] = value;
  }
  const location = out.location;
  if (typeof location === 'string' && location.startsWith(`${upstreamBase}/`)) {
    out.location = `${prefix}${location.slice(upstreamBase.length)}`;
  }
  return out;
}
