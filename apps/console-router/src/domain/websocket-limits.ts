/** The WebSocket limits of a router (`CONSOLE_ROUTER_WS_MAX_*`). */
export interface WebSocketLimitSettings {
  /** WebSockets open at once through the router. */
  maxConnections: number;
  /** WebSockets open at once to one agent's route. */
  maxPerRoute: number;
  /** WebSockets open at once for one caller (`<kind>:<id>`), all routes together. */
  maxPerCaller: number;
  /** The largest message a caller may send to an agent, its fragments summed. */
  maxMessageBytes: number;
}

/** Which limit refused a WebSocket (also the key of the refusal counts in `/status`). */
export type WebSocketLimit = 'connections' | 'per_route' | 'per_caller' | 'message_size';

/** The environment variable that sets each limit: close reasons and problem details name it. */
export const LIMIT_VARIABLES: Record<WebSocketLimit, string> = {
  connections: 'CONSOLE_ROUTER_WS_MAX_CONNECTIONS',
  per_route: 'CONSOLE_ROUTER_WS_MAX_PER_ROUTE',
  per_caller: 'CONSOLE_ROUTER_WS_MAX_PER_CALLER',
  message_size: 'CONSOLE_ROUTER_WS_MAX_MESSAGE_BYTES',
};

/** A WebSocket admitted under the limits: `release()` (idempotent) gives its places back. */
export interface WebSocketPlace {
  agentId: string;
  caller: string;
  release(): void;
}

/**
 * The WebSockets open through the router, counted in total, per route and per caller, checked against the
 * limits when one is admitted (before the agent is asked to upgrade, so concurrent upgrades cannot overshoot).
 * Two map entries per caller and route in use, nothing per socket beyond the returned place.
 */
export class WebSocketLimits {
  private total = 0;
  private readonly byRoute = new Map<string, number>();
  private readonly byCaller = new Map<string, number>();
  /** Refusals since start, by limit. */
  readonly refused: Record<WebSocketLimit, number> = {
    connections: 0,
    per_route: 0,
    per_caller: 0,
    message_size: 0,
  };

  constructor(readonly settings: WebSocketLimitSettings) {}

  /** A place for a WebSocket of `caller` to `agentId`, or the limit it would exceed (counted as refused). */
  admit(agentId: string, caller: string): WebSocketPlace | WebSocketLimit {
    const s = this.settings;
    let limit: WebSocketLimit | undefined;
    if (this.total >= s.maxConnections) limit = 'connections';
    else if ((this.byCaller.get(caller) ?? 0) >= s.maxPerCaller) limit = 'per_caller';
    else if ((this.byRoute.get(agentId) ?? 0) >= s.maxPerRoute) limit = 'per_route';
    if (limit !== undefined) {
      this.refused[limit] += 1;
      return limit;
    }
    this.total += 1;
    this.byRoute.set(agentId, (this.byRoute.get(agentId) ?? 0) + 1);
    this.byCaller.set(caller, (this.byCaller.get(caller) ?? 0) + 1);
    return new Place(this, agentId, caller);
  }

  /** Counts a message over `maxMessageBytes` (its WebSocket was closed with 1009). */
  messageRefused(): void {
    this.refused.message_size += 1;
  }

  /** @internal Gives one WebSocket's places back. */
  release(agentId: string, caller: string): void {
    this.total -= 1;
    decrement(this.byRoute, agentId);
    decrement(this.byCaller, caller);
  }

  /** WebSockets admitted and not yet released. */
  get open(): number {
    return this.total;
  }

  /** Callers with at least one WebSocket open. */
  get callers(): number {
    return this.byCaller.size;
  }

  /** The most WebSockets one caller holds now (0 when none). */
  busiestCaller(): number {
    let most = 0;
    for (const n of this.byCaller.values()) if (n > most) most = n;
    return most;
  }
}

function decrement(map: Map<string, number>, key: string): void {
  const left = (map.get(key) ?? 1) - 1;
  if (left > 0) map.set(key, left);
  else map.delete(key);
}

class Place implements WebSocketPlace {
  private released = false;
  constructor(
    private readonly limits: WebSocketLimits,
    readonly agentId: string,
    readonly caller: string,
  ) {}

  /** Bound: it is handed to a socket's `close` as is. */
  readonly release = (): void => {
    if (this.released) return;
    this.released = true;
    this.limits.release(this.agentId, this.caller);
  };
}

/** The close reason (at most 123 bytes) or problem detail naming the limit a WebSocket met. */
export function limitReason(limit: WebSocketLimit, settings: WebSocketLimitSettings): string {
  const value =
    limit === 'connections'
      ? settings.maxConnections
      : limit === 'per_route'
        ? settings.maxPerRoute
        : limit === 'per_caller'
          ? settings.maxPerCaller
          : settings.maxMessageBytes;
  const what =
    limit === 'message_size' ? 'message larger than' : `${limit.replace('_', ' ')} WebSocket limit reached:`;
  return `${what} ${LIMIT_VARIABLES[limit]}=${value}`;
}
