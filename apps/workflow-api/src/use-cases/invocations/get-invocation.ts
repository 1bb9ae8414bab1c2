import type { InvocationChangeWaiter } from '../../data/invocation-change.waiter';
import { readInvocationView } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound } from '../../domain/errors';
import { isTerminal } from '../../domain/invocation-states';

/** Named here for the route that passes the waiter in (routes do not import `data/`). */
export type { InvocationChangeWaiter };

/** What a held read waits for: a state or attention other than these (the caller's, or those at the start). */
export interface InvocationWait {
  seconds: number;
  state?: string;
  attention?: string;
}

/** While announcements arrive, a held read still re-reads this often (an announcement lost with Redis). */
export const RECHECK_LISTENING_MS = 5_000;
/** While the subscription is down, a held read re-reads this often: a bounded poll of one row. */
export const RECHECK_DEAF_MS = 1_000;

/**
 * One invocation of the project with its run's progress; another project's (or an unknown) id is 404
 * `invocation_not_found`. With a wait, the read is held until the invocation's state or attention differs from
 * the ones given (or read first), the invocation is terminal, the wait ends or `signal` aborts (the caller went
 * away); a change is announced through Redis and confirmed here, in Postgres.
 */
export async function getInvocation(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
  hold?: { wait: InvocationWait; waiter: InvocationChangeWaiter; signal?: AbortSignal },
): Promise<InvocationView> {
  // A wait that saw the change answers what it read; one that ended otherwise reads it again.
  const changed =
    hold && hold.wait.seconds > 0 ? await waitForChange(deps, projectId, invocationId, hold) : null;
  const view = changed ?? (await readInvocationView(deps.pool, projectId, invocationId));
  if (!view) throw invocationNotFound(invocationId);
  return view;
}

async function waitForChange(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
  hold: { wait: InvocationWait; waiter: InvocationChangeWaiter; signal?: AbortSignal },
): Promise<InvocationView | null> {
  const { wait, waiter, signal } = hold;
  const deadline = Date.now() + wait.seconds * 1000;
  // Watch first: a change committed after the read below wakes this request.
  const watch = waiter.watch(invocationId);
  try {
    let seen: { state: string; attention: string } | undefined;
    for (;;) {
      // The whole view (one statement): when it shows the change, it is the answer.
      const view = await readInvocationView(deps.pool, projectId, invocationId);
      if (!view) throw invocationNotFound(invocationId);
      const row = view.invocation;
      seen ??= { state: wait.state ?? row.state, attention: wait.attention ?? row.attention };
      if (isTerminal(row.state) || row.state !== seen.state || row.attention !== seen.attention) return view;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return null;
      const recheck = waiter.listening() ? RECHECK_LISTENING_MS : RECHECK_DEAF_MS;
      await watch.next(Math.min(left, recheck), signal);
      if (signal?.aborted) return null;
    }
  } finally {
    watch.close();
  }
}
