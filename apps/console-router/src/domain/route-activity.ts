/** Last activity is recorded at most this often per route. */
export const ACTIVITY_THROTTLE_MS = 5_000;

/**
 * Per-route activity: the last time a request through the route succeeded (recorded at most once every
 * {@link ACTIVITY_THROTTLE_MS}, so a busy stream costs one clock read per chunk, never a write per chunk) and
 * the WebSockets open through it.
 */
export class RouteActivity {
  private readonly last = new Map<string, number>();
  private readonly open = new Map<string, number>();

  constructor(
    private readonly throttleMs = ACTIVITY_THROTTLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records activity on the agent's route unless one was recorded within the throttle window. */
  touch(agentId: string): void {
    const t = this.now();
    const previous = this.last.get(agentId);
    if (previous === undefined || t - previous >= this.throttleMs) this.last.set(agentId, t);
  }

  lastActivity(agentId: string): Date | undefined {
    const t = this.last.get(agentId);
    return t === undefined ? undefined : new Date(t);
  }

  /** Counts a WebSocket open on the route; the returned function (idempotent) counts it closed. */
  opened(agentId: string): () => void {
    this.open.set(agentId, (this.open.get(agentId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(agentId) ?? 1) - 1;
      if (left > 0) this.open.set(agentId, left);
      else this.open.delete(agentId);
    };
  }

  openSockets(agentId: string): number {
    return this.open.get(agentId) ?? 0;
  }
}
