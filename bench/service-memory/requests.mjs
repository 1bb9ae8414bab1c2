// The requests of bench/service-memory.mjs: every one is counted under its service, failures by label, so the
// report can say what was asked of each process and what failed.
import { jsonRequest } from '../harness/requests.mjs';

/** Expected answers and failures, per service and label. */
export const tally = new Map();

/** Counts one request of `service`, a failure under `label` (the first few with their detail). */
export function count(service, label, ok, detail) {
  const t = tally.get(service) ?? { requests: 0, failures: new Map(), examples: [] };
  tally.set(service, t);
  t.requests += 1;
  if (!ok) {
    t.failures.set(label, (t.failures.get(label) ?? 0) + 1);
    if (t.examples.length < 5) t.examples.push(`${label}${detail ? `: ${detail}` : ''}`);
  }
}

/** One request; counts it under `service`; resolves to the parsed body (or undefined) when its status is in `ok`. */
export async function call(service, label, url, { method = 'GET', headers = {}, body, ok = [200] } = {}) {
  const answer = await jsonRequest(url, { method, headers, body, timeoutMs: 30_000 });
  const good = ok.includes(answer.status);
  count(service, `${label}: ${answer.label}`, good, answer.json?.detail);
  return good ? (answer.json ?? {}) : undefined;
}

/** A set-up request: throws unless the status is in `ok`. */
export async function setup(step, url, options = {}) {
  const data = await call('set-up', step, url, options);
  if (data === undefined) {
    const t = tally.get('set-up');
    throw new Error(`set-up failed at ${step}: ${t.examples.at(-1) ?? 'no answer'}`);
  }
  return data.data ?? data;
}

/** The requests and failures counted, by service, for the report; and the number of failures. */
export function requestTally() {
  const requests = Object.fromEntries(
    [...tally.entries()].map(([service, t]) => [
      service,
      { requests: t.requests, failures: Object.fromEntries(t.failures), examples: t.examples },
    ]),
  );
  const failures = [...tally.values()].reduce(
    (n, t) => n + [...t.failures.values()].reduce((a, b) => a + b, 0),
    0,
  );
  return { requests, failures };
}
