import { randomBytes } from 'node:crypto';
import type { HubDeps } from '../../deps';
import { OPEN_SPAWN_STATES } from '../../data/spawn.lookups';
import { driveAgentSpawn } from './drive-agent-spawn';
import type { SpawnDriveOptions } from './drive-agent-spawn';

export interface SpawnDriverSettings {
  relayTimeoutMs: number;
  deadlineMs: number;
  /** How long a spawn request waits for the outcome before answering 202. */
  waitMs: number;
  sweepIntervalMs: number;
  backoffMs?: { first: number; max: number };
  maxRetryAfterMs?: number;
  fetch?: (input: Request) => Promise<Response>;
}

/**
 * The hub process's spawn driving: each spawn recorded here is driven in the background right after its
 * record is committed, and a sweeper (started by the entry point) resumes open spawns whose lease has
 * lapsed, such as those of a hub that stopped or crashed. Stopping aborts the running relay calls and
 * releases their leases.
 */
export interface SpawnDriver {
  readonly settings: SpawnDriverSettings;
  /** This process's name on the leases of the spawns it drives. */
  readonly owner: string;
  /** Drives a spawn in the background (once per process at a time). */
  drive(spawnId: string): void;
  /** Resolves when this process's driving of the spawn ends, or after `ms`, whichever is first. */
  settle(spawnId: string, ms: number): Promise<void>;
  /** Resumes every open spawn whose lease has lapsed; resolves with the number of spawns taken up. */
  sweep(): Promise<number>;
  startSweeper(): void;
  stop(): Promise<void>;
}

/** How long a lease lasts without renewal: longer than one relay call. */
export const leaseMsOf = (settings: Pick<SpawnDriverSettings, 'relayTimeoutMs'>) =>
  settings.relayTimeoutMs + 15_000;

export function createSpawnDriver(deps: HubDeps, settings: SpawnDriverSettings): SpawnDriver {
  const abort = new AbortController();
  const active = new Map<string, Promise<void>>();
  let sweeper: NodeJS.Timeout | undefined;
  let sweeping: Promise<number> | undefined;
  const options: SpawnDriveOptions = {
    owner: `hub-${process.pid}-${randomBytes(6).toString('hex')}`,
    relayTimeoutMs: settings.relayTimeoutMs,
    leaseMs: leaseMsOf(settings),
    backoffMs: settings.backoffMs ?? { first: 500, max: 8_000 },
    maxRetryAfterMs: settings.maxRetryAfterMs ?? 10_000,
    signal: abort.signal,
    ...(settings.fetch ? { fetch: settings.fetch } : {}),
  };

  const drive = (spawnId: string) => {
    if (abort.signal.aborted || active.has(spawnId)) return;
    const running = driveAgentSpawn(deps, spawnId, options)
      .catch((error: unknown) => {
        deps.logger.error(
          { err: error, spawn_id: spawnId },
          'driving an agent spawn failed; the sweeper retries it',
        );
      })
      .finally(() => active.delete(spawnId));
    active.set(spawnId, running);
  };

  const sweepOnce = async () => {
    const lapsed = await deps.db.agentSpawn.findMany({
      where: {
        state: { in: [...OPEN_SPAWN_STATES] },
        OR: [{ leaseUntil: null }, { leaseUntil: { lt: deps.now() } }],
      },
      orderBy: { createdAt: 'asc' },
      take: 50,
      select: { id: true },
    });
    const fresh = lapsed.filter((s) => !active.has(s.id));
    for (const s of fresh) drive(s.id);
    return fresh.length;
  };

  const driver: SpawnDriver = {
    settings,
    owner: options.owner,
    drive,
    async settle(spawnId, ms) {
      const running = active.get(spawnId);
      if (!running) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
      clearTimeout(timer);
    },
    sweep() {
      sweeping ??= sweepOnce().finally(() => (sweeping = undefined));
      return sweeping;
    },
    startSweeper() {
      if (sweeper || abort.signal.aborted) return;
      const tick = () => {
        driver
          .sweep()
          .catch((error: unknown) =>
            deps.logger.error({ err: error }, 'agent spawn sweep failed; the next one retries'),
          );
      };
      sweeper = setInterval(tick, settings.sweepIntervalMs);
      sweeper.unref();
      tick();
    },
    async stop() {
      if (sweeper) clearInterval(sweeper);
      sweeper = undefined;
      abort.abort();
      await Promise.allSettled([...active.values(), ...(sweeping ? [sweeping] : [])]);
    },
  };
  return driver;
}
