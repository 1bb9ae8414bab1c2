import { APIError } from '@svc/sdk';
import type { TicketSource } from './tickets';
import { withTicket } from './tickets';

/**
 * Calls one of the agent's console routes on its host's console router, straight from the page (the router
 * answers CORS for the pages it accepts), with a console ticket as `?ticket=`. A refusal becomes the SDK's
 * APIError so `ProblemMessage` shows the router's problem (its code, e.g. `agent_unavailable`). A 401 drops
 * the cached ticket and is tried once more with a new one.
 */
export async function routerJson<T>(
  consoleUrl: string,
  tickets: TicketSource,
  path: string,
  init: {
    method?: 'GET' | 'POST';
    body?: unknown;
    query?: Record<string, string | number>;
    signal?: AbortSignal;
  } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    const ticket = await tickets.get();
    const response = await fetch(withTicket(consoleUrl, path, ticket, init.query), {
      method: init.method ?? 'GET',
      headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
      body: init.body === undefined ? null : JSON.stringify(init.body),
      credentials: 'omit',
      referrerPolicy: 'no-referrer',
      signal: init.signal ?? null,
    });
    const text = await response.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (response.ok) return parsed as T;
    if (response.status === 401 && attempt === 0) {
      tickets.drop();
      continue;
    }
    // The URL carries the ticket: the error gets the route without it.
    throw APIError.from(
      response.status,
      parsed,
      response.headers,
      response.statusText,
      `${consoleUrl}${path}`,
    );
  }
}
