// The runs of bench/workflow-run.mjs as its phases see them: a failed request, where a completed run's time
// went, and the burst (invocations launched at once and polled until done). Not a bench itself.
import { sleep } from '../harness/stack.mjs';
import { failureLog } from '../harness/report.mjs';

/** A failed request: the label counts failures by kind; the detail is the problem's code and title. */
export class RequestFailed extends Error {
  constructor(label, detail) {
    super(`${label}${detail ? `: ${detail}` : ''}`);
    this.label = label;
    this.detail = detail;
  }
}

/** Where the time of one completed run went, from the invocation's own timestamps (same machine clock). */
export function timeline(view, seenAtEpochMs) {
  const stage = view.stages?.[0];
  const at = (value) => (value ? Date.parse(value) : NaN);
  const created = at(view.created_at);
  const assigned = at(stage?.assigned_at);
  const claimed = at(stage?.claimed_at);
  const published = at(view.artifact?.created_at);
  return {
    created_to_assigned_ms: assigned - created,
    assigned_to_claimed_ms: claimed - assigned,
    claimed_to_artifact_ms: published - claimed,
    artifact_to_seen_ms: seenAtEpochMs - published,
  };
}

/** The state of an invocation a failure report needs, never more. */
export function describeView(view) {
  if (!view) return 'no answer yet';
  const stages = (view.stages ?? [])
    .map(
      (s) =>
        `${s.key}:${s.state}${s.owner_agent_id ? '@owned' : ''}${s.blocker_reason ? ` (${s.blocker_reason})` : ''}`,
    )
    .join(', ');
  return (
    `state ${view.state}, attention ${view.attention}` +
    `${view.attention_reason ? ` (${view.attention_reason})` : ''}, stages [${stages}]` +
    `${view.artifact ? ', artifact published' : ''}`
  );
}

/**
 * Invokes and launches `count` at once, then polls them with `pollers` pollers (each invocation at most every
 * `pollMs`; or, with `waitS`, one long poll per invocation held up to `waitS` s each) until all are done, `timeoutMs` has passed or `signal` is aborted. Resolves to the completed
 * count, their latencies and timelines, the wall time until the last completion and the failures.
 */
export async function runBurst(
  { invokeAndLaunch, getInvocation },
  { count: burstCount, pollers, pollMs, waitS = 0, timeoutMs: burstTimeoutMs, signal: interrupted },
) {
  // With `waitS`, each invocation is followed by its own long poll (`?wait=`) instead of the pollers.
  const burstPollers = waitS > 0 ? 0 : pollers;
  const failures = failureLog({ examples: 5 });
  const latencies = [];
  const timelines = [];
  const pending = new Map();
  let launching = burstCount;
  const t0 = performance.now();
  const deadline = t0 + burstTimeoutMs;
  let lastDone = t0;
  const launches = Array.from({ length: burstCount }, async () => {
    const start = performance.now();
    try {
      const { id } = await invokeAndLaunch();
      const item = { id, start, nextPoll: performance.now(), inFlight: false, view: undefined };
      pending.set(id, item);
      if (waitS > 0) await waitFor(item);
    } catch (error) {
      failures.add(error.label ?? String(error?.message ?? error), error.detail);
    } finally {
      launching -= 1;
    }
  });
  /** Takes in an answer for `item`: done when completed, failed or cancelled. */
  function settle(item, view) {
    item.view = view;
    if (view.state === 'completed') {
      lastDone = performance.now();
      latencies.push(lastDone - item.start);
      timelines.push(timeline(view, Date.now()));
      pending.delete(item.id);
    } else if (view.state === 'failed' || view.state === 'cancelled') {
      failures.add(`run ended ${view.state}`, `${item.id}: ${describeView(view)}`);
      pending.delete(item.id);
    }
  }
  /** Long-polls `item` (each answer held until its state changes, at most `waitS`) until it is done. */
  async function waitFor(item) {
    while (pending.has(item.id) && performance.now() < deadline && !interrupted.aborted) {
      const wait = Math.max(1, Math.min(waitS, Math.floor((deadline - performance.now()) / 1000)));
      try {
        settle(
          item,
          await getInvocation(item.id, { wait, ...(item.view ? { state: item.view.state } : {}) }),
        );
      } catch (error) {
        failures.add(error.label ?? String(error?.message ?? error), error.detail);
        pending.delete(item.id);
      }
    }
  }
  /** The pending invocation not being polled whose next poll is due first. */
  const nextItem = () => {
    let best;
    for (const item of pending.values()) {
      if (!item.inFlight && (!best || item.nextPoll < best.nextPoll)) best = item;
    }
    return best;
  };
  async function poller() {
    while ((launching > 0 || pending.size > 0) && performance.now() < deadline && !interrupted.aborted) {
      const item = nextItem();
      if (!item) {
        await sleep(1);
        continue;
      }
      const wait = item.nextPoll - performance.now();
      if (wait > 0) {
        await sleep(Math.min(wait, 5));
        continue;
      }
      item.inFlight = true;
      item.nextPoll = performance.now() + pollMs;
      try {
        settle(item, await getInvocation(item.id));
      } catch (error) {
        failures.add(error.label ?? String(error?.message ?? error), error.detail);
        pending.delete(item.id);
      } finally {
        item.inFlight = false;
      }
    }
  }
  await Promise.all([...launches, ...Array.from({ length: burstPollers }, poller)]);
  for (const item of pending.values()) {
    failures.add(
      `run not completed within the burst's ${burstTimeoutMs / 1000} s (last state ${item.view?.state ?? 'unknown'})`,
      `${item.id}: ${describeView(item.view)}`,
    );
  }
  const wallMs = (pending.size > 0 ? performance.now() : lastDone) - t0;
  return { invoked: burstCount, completed: latencies.length, latencies, timelines, wallMs, failures };
}
