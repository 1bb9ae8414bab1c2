import type { HubDeps } from '../deps';
import { markLostAgents } from '../use-cases/agents/mark-lost-agents';

export interface PresenceSweeper {
  /** Runs one pass now (the next one follows `intervalMs` after it). */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The presence sweep as a loop of every hub process: every `intervalMs` (never two passes of one process at
 * once) it marks hosts and agents gone silent as lost (see {@link markLostAgents}; one replica at a time does
 * the work, under an advisory lock).
 */
export function startPresenceSweeper(
  deps: Pick<HubDeps, 'db' | 'audit' | 'now' | 'logger' | 'notices'>,
  intervalMs: number,
): PresenceSweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const result = await markLostAgents(deps);
      if (result.hosts.length + result.agents.length > 0) {
        deps.logger.warn(
          { hosts: result.hosts, agents: result.agents },
          'hosts or agents stopped heartbeating: marked lost',
        );
      }
    } catch (error) {
      deps.logger.warn({ err: error }, 'presence sweep failed; the next one retries');
    }
  };
  const tick = () => {
    timer = undefined;
    running = pass().finally(() => {
      running = undefined;
      if (!stopped) {
        timer = setTimeout(tick, intervalMs);
        timer.unref();
      }
    });
  };
  timer = setTimeout(tick, intervalMs);
  timer.unref();
  return {
    async sweep() {
      if (running) return running;
      if (timer) clearTimeout(timer);
      tick();
      await running;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
