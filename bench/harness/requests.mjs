// One JSON request to a service's public API, as the benches that set up and drive a stack send them. Not a
// bench itself.
import { testing } from './cli.mjs';

/**
 * Sends one request (`body` as JSON unless it is a string) and never throws: resolves to the status (0 when no
 * answer came), the parsed body (undefined when it is not JSON) and a `label` that names what happened
 * (`HTTP 409 conflict`, or the socket error's code).
 */
export async function jsonRequest(url, { method = 'GET', headers = {}, body, timeoutMs } = {}) {
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
      ...(timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(timeoutMs) }),
    });
  } catch (error) {
    return { status: 0, label: testing().failureLabel(error) };
  }
  const text = await res.text().catch(() => '');
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, label: `HTTP ${res.status}${json?.code ? ` ${json.code}` : ''}` };
}

/**
 * Counters of a service's Prometheus endpoint `url` (`/metrics`): `wanted` maps a key to `[metric, labels]`;
 * resolves to the value of each by key, and fails when the endpoint does not answer or a counter is missing.
 */
export async function readCounters(url, wanted, whose) {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${whose} /metrics answered ${res.status}`);
  const samples = testing().parseMetrics(await res.text());
  return Object.fromEntries(
    Object.entries(wanted).map(([key, [name, labels]]) => {
      const value = testing().metricValue(samples, name, labels);
      if (value === undefined) throw new Error(`${whose} /metrics has no ${name}`);
      return [key, value];
    }),
  );
}
