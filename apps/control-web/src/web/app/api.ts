import { APIError, Hub, Workflow } from '@svc/sdk';

/** The header the server requires on every state-changing request (its CSRF guard). */
export const CSRF_HEADERS = { 'x-svc-csrf': '1' } as const;

/** Dispatched on `window` when an API answer says the session is gone (401): the app shows sign-in. */
export const SIGNED_OUT_EVENT = 'svc:signed-out';

/**
 * Every request of the page goes to its own origin: the server forwards `/hub/…` and `/workflow/…` and adds
 * the session's token, so the page holds no credential (the SDK is given none).
 */
const sameOriginFetch = async (request: Request): Promise<Response> => {
  const response = await fetch(request);
  if (response.status === 401) window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
  return response;
};

export interface Clients {
  hub: Hub;
  workflow: Workflow;
}

export function createClients(origin: string = window.location.origin): Clients {
  const common = { fetch: sameOriginFetch, defaultHeaders: { ...CSRF_HEADERS }, maxRetries: 1 };
  return {
    hub: new Hub({ baseUrl: `${origin}/hub`, ...common }),
    workflow: new Workflow({ baseUrl: `${origin}/workflow`, ...common }),
  };
}

type RawResult<T> = { data?: T; error?: unknown; response: Response };

/** The `data` of a raw (openapi-fetch) answer, or the SDK's typed {@link APIError} for a failure. */
export function unwrap<T>(result: RawResult<{ data: T }>): T {
  if (result.response.ok && result.data !== undefined) return result.data.data;
  throw toApiError(result);
}

/** A raw answer without a body (204), or the error. */
export function expectOk(result: RawResult<unknown>): void {
  if (!result.response.ok) throw toApiError(result);
}

function toApiError(result: RawResult<unknown>): APIError {
  const r = result.response;
  return APIError.from(r.status, result.error, r.headers, r.statusText, r.url);
}

/** Calls the server's own JSON endpoints (`/session`) with the CSRF header; failures become an APIError. */
export async function callServer<T>(method: string, path: string, body?: unknown): Promise<T | undefined> {
  const response = await fetch(path, {
    method,
    headers: { ...CSRF_HEADERS, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? null : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await response.text();
  const parsed: unknown = text ? JSON.parse(text) : undefined;
  if (!response.ok)
    throw APIError.from(response.status, parsed, response.headers, response.statusText, response.url);
  return (parsed as { data?: T } | undefined)?.data;
}
