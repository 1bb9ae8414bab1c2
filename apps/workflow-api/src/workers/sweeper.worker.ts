import { withDeadline } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import { newSweepState, sweepOnce } from '../use-cases/engine/sweep-outbox';

/** Longest one sweep pass may take before the next one is scheduled regardless. */
const SWEEP_DEADLINE_MS = 60_000;

/** Runs {@link sweepOnce} every `intervalMs` (never two passes at once) until stopped. */
export function startSweeper(deps: WorkflowDeps): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const state = newSweepState();
  const tick = () => {
    // A pass that hangs (a query on a dead connection) must not stop every later pass.
    running = withDeadline(sweepOnce(deps, state), SWEEP_DEADLINE_MS, 'a sweep pass')
      .then((result) => {
        const metrics = deps.sweeperMetrics;
        metrics?.requeued('outbox', result.requeued);
        metrics?.requeued('recheck', result.rechecked);
        metrics?.requeued('delivery', result.deliveries);
        metrics?.requeued('handoff', result.handoffs);
        metrics?.requeued('owner_check', result.ownerChecks);
        if (result.requeued + result.rechecked + result.deliveries + result.handoffs + result.ownerChecks > 0)
          deps.logger.info(result, 'sweeper re-enqueued work');
      })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'sweep failed; retrying next interval'))
      .finally(() => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, deps.engine.sweepIntervalMs);
      });
    timer = undefined;
  };
  timer = setTimeout(tick, deps.engine.sweepIntervalMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
