import type { IncomingMessage } from 'node:http';
import { isAllowedOrigin } from './request-origin';
import type { OriginRules } from './request-origin';

/**
 * CORS for agent routes. A page the router accepts WebSockets from (its public origin, a configured page
 * origin such as the control web app's, or a loopback page) may also call the HTTP routes of a console (health,
 * chat) with a console ticket in `?ticket=`. The answer names that origin and no credentials mode: tickets
 * travel in the URL, never in cookies, so `Access-Control-Allow-Credentials` is never sent. Any other origin
 * gets no CORS headers, so its page cannot read an answer.
 */
export function corsHeaders(
  origin: string | undefined,
  rules: OriginRules,
): Record<string, string> | undefined {
  if (!origin || !isAllowedOrigin(origin, rules)) return undefined;
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': 'X-Request-Id',
    Vary: 'Origin',
  };
}

/** A CORS preflight: `OPTIONS` with `Access-Control-Request-Method`. */
export function isPreflight(req: Pick<IncomingMessage, 'method' | 'headers'>): boolean {
  return req.method === 'OPTIONS' && typeof req.headers['access-control-request-method'] === 'string';
}

/** What a preflight from an accepted page may do: the console's methods and a JSON body. */
export const PREFLIGHT_HEADERS: Record<string, string> = {
  'Access-Control-Allow-Methods': 'GET, POST',
  'Access-Control-Allow-Headers': 'Content-Type, X-Request-Id',
  'Access-Control-Max-Age': '600',
};
