/** Small HTTP probes of the runtime's local services (relay, console router). Never sends a credential. */

export interface Probe {
  ok: boolean;
  status: number | null;
  body: unknown;
  /** One line: why it is not ok. */
  detail: string | null;
}

async function request(url: string, method: 'GET' | 'POST', timeoutMs: number): Promise<Probe> {
  try {
    const res = await fetch(url, { method, signal: AbortSignal.timeout(timeoutMs) });
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
