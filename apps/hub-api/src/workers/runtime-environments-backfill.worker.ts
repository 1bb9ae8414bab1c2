import type { HubDeps } from '../deps';
import { backfillRuntimeEnvironments } from '../use-cases/runtime-environments/backfill-runtime-environments';

export interface BackfillJob {
  /** Settles after the first successful run (or when stopped). */
  done: Promise<void>;
  stop(): void;
}

/**
 * The backfill as a job of every hub process: it runs once at start-up (reading only hosts without an
 * environment, so it costs one query once the backfill is done) and retries every `retryMs` until it has
 * succeeded once. Concurrent replicas are safe: the backfill locks each host row it places.
 */
export function startRuntimeEnvironmentBackfill(
  deps: Pick<HubDeps, 'db' | 'audit' | 'logger'>,
  options: { retryMs?: number } = {},
): BackfillJob {
  const retryMs = options.retryMs ?? 60_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let finish: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const attempt = async () => {
    if (stopped) return;
    try {
      const summary = await backfillRuntimeEnvironments(deps);
      if (summary.created.length > 0) {
        deps.logger.info(
          { created: summary.created.length, placed: summary.placed },
          'runtime environments backfilled from the hosts’ public URLs',
        );
      }
      finish();
    } catch (error) {
      deps.logger.warn({ err: error, retry_ms: retryMs }, 'runtime environment backfill failed; retrying');
      if (!stopped) timer = setTimeout(() => void attempt(), retryMs);
    }
  };
  void attempt();
  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      finish();
    },
  };
}
