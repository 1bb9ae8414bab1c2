import { nodeFetch } from '@svc/service-kit/node-fetch';

/**
 * Small HTTP probes of the runtime's local services (relay, console router). Never sends a credential. They go
 * through Node's HTTP client, not the global fetch: the global fetch refuses the ports of the Fetch standard's
 * "bad port" list (10080 among them) with a bare `fetch failed`, and a relay an operator put on such a port
 * would look down forever.
 */
const localFetch = nodeFetch();

export interface Probe {
  ok: boolean;
  status: number | null;
  body: unknown;
  /** One line: why it is not ok. */
  detail: string | null;
}

async function request(url: string, method: 'GET' | 'POST', timeoutMs: number): Promise<Probe> {
  try {
    const res = await localFetch(new Request(url, { method, signal: AbortSignal.timeout(timeoutMs) }));
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    const named = (body as { code?: unknown; reasons?: unknown; checks?: unknown } | null) ?? null;
    const detail = res.ok
      ? null
      : `HTTP ${res.status}${typeof named?.code === 'string' ? ` ${named.code}` : ''}${summary(named)}`;
    return { ok: res.ok, status: res.status, body, detail };
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? 'unreachable');
    return { ok: false, status: null, body: null, detail: `not answering (${why})` };
  }
}

function summary(body: { checks?: unknown } | null): string {
  const checks = body?.checks;
  if (!checks || typeof checks !== 'object') return '';
  const failing = Object.entries(checks as Record<string, unknown>)
    .filter(([, v]) => v !== 'ok')
    .map(([k, v]) => `${k} ${typeof v === 'string' ? v : 'failed'}`);
  return failing.length ? ` (${failing.join('; ')})` : '';
}

export function probe(url: string, timeoutMs = 3_000): Promise<Probe> {
  return request(url, 'GET', timeoutMs);
}

export function post(url: string, timeoutMs = 10_000): Promise<Probe> {
  return request(url, 'POST', timeoutMs);
}
