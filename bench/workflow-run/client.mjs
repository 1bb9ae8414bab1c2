// The Workflow API calls of bench/workflow-run.mjs as one project's client makes them. Not a bench itself.
import { randomBytes } from 'node:crypto';
import { sleep } from '../harness/stack.mjs';
import { jsonRequest } from '../harness/requests.mjs';
import { RequestFailed, describeView, timeline } from './runs.mjs';

/** The intent every run of the bench asks for (its route is seeded by the bench). */
export const INTENT = 'Please write the weekly report for the bench';

/** One JSON request; resolves to the answer's `data` when the status is one of `ok`. */
export async function call(step, method, url, { headers = {}, body, ok = [200] } = {}) {
  const answer = await jsonRequest(url, { method, headers, body });
  if (!ok.includes(answer.status)) {
    const json = answer.json ?? {};
    throw new RequestFailed(
      `${step}: ${answer.label}`,
      [json.code, json.detail ?? json.title].filter(Boolean).join(' — '),
    );
  }
  return answer.json?.data;
}

/**
 * The Workflow API calls of a run over one key, and phase 1's unit built from them: `oneRun` polls every
 * `pollMs` or, with `waitS`, holds each read until the state changes (`?wait=&state=`, as the SDK's `run`
 * does), and gives up after `runTimeoutMs`.
 */
export function runClient({ invocations, headers }, { runTimeoutMs, pollMs, waitS = 0 }) {
  let sequence = 0;
  /** Invoke and launch one invocation; resolves to its id and the two round trips. */
  async function invokeAndLaunch() {
    sequence += 1;
    const invoked = await call('invoke', 'POST', invocations, {
      headers: {
        ...headers,
        'idempotency-key': `bench-run-${process.pid}-${sequence}-${randomBytes(4).toString('hex')}`,
      },
      body: { intent: INTENT },
      ok: [201],
    });
    const t1 = performance.now();
    await call('launch', 'POST', `${invocations}/${invoked.invocation_id}/launch`, {
      headers,
      ok: [200, 202],
    });
    return { id: invoked.invocation_id, launchedAt: t1, launchDoneAt: performance.now() };
  }
  const getInvocation = (id, query) =>
    call('get invocation', 'GET', `${invocations}/${id}${query ? `?${new URLSearchParams(query)}` : ''}`, {
      headers,
    });

  /** Phase 1's unit: invoke → launch → poll until completed. Throws RequestFailed on any failure. */
  async function oneRun() {
    const t0 = performance.now();
    const { id, launchedAt, launchDoneAt } = await invokeAndLaunch();
    const deadline = t0 + runTimeoutMs;
    let polls = 0;
    let view;
    for (;;) {
      const pollStarted = performance.now();
      const held = Math.min(waitS, Math.floor((deadline - pollStarted) / 1000));
      view = await getInvocation(id, held >= 1 && view ? { wait: held, state: view.state } : undefined);
      polls += 1;
      if (view.state === 'completed') {
        const ms = performance.now() - t0;
        return {
          ms,
          invoke_ms: launchedAt - t0,
          launch_ms: launchDoneAt - launchedAt,
          polls,
          ...timeline(view, Date.now()),
        };
      }
      if (view.state === 'failed' || view.state === 'cancelled') {
        throw new RequestFailed(`run ended ${view.state}`, `${id}: ${describeView(view)}`);
      }
      if (performance.now() >= deadline) {
        throw new RequestFailed(
          `run not completed within ${runTimeoutMs / 1000} s (last state ${view.state})`,
          `${id}: ${describeView(view)}`,
        );
      }
      const wait = held >= 1 ? 0 : pollStarted + pollMs - performance.now();
      if (wait > 0) await sleep(wait);
    }
  }

  return { invokeAndLaunch, getInvocation, oneRun };
}
