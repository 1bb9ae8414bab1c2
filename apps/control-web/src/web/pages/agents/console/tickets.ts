import type { Hub } from '@svc/sdk';
import { unwrap } from '../../../app/api';

/** A ticket is not used when it has less than this left (the router must still find it valid). */
const MARGIN_MS = 10_000;

/**
 * Console tickets for one agent (`POST /api/v1/agents/{agentId}/console-tickets`, 60 s each). The page holds
 * no participant token, so every call to the console router carries a ticket as `?ticket=`; one is reused
 * until shortly before it expires, so polling does not ask the hub (and its audit log) for one per request.
 * Tickets live only in memory, never in storage.
 */
export class TicketSource {
  private current: { ticket: string; expiresAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly hub: Hub,
    private readonly agentId: string,
  ) {}

  /** A ticket valid for at least a few more seconds. */
  get(): Promise<string> {
    if (this.current && this.current.expiresAt - Date.now() > MARGIN_MS) {
      return Promise.resolve(this.current.ticket);
    }
    this.pending ??= this.fresh().finally(() => (this.pending = undefined));
    return this.pending;
  }

  /** A new ticket, whatever the cached one (a WebSocket opens with a ticket of its own). */
  async fresh(): Promise<string> {
    const data = await this.hub.raw
      .POST('/api/v1/agents/{agentId}/console-tickets', { params: { path: { agentId: this.agentId } } })
      .then(unwrap);
    this.current = { ticket: data.ticket, expiresAt: new Date(data.expires_at).getTime() };
    return data.ticket;
  }

  /** Forgets the cached ticket (after the router refused it). */
  drop(): void {
    this.current = undefined;
  }
}

/** `base` + `path` with the ticket (and other query parameters) attached. */
export function withTicket(
  base: string,
  path: string,
  ticket: string,
  query: Record<string, string | number> = {},
): string {
  const url = new URL(`${base}${path}`);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, String(value));
  url.searchParams.set('ticket', ticket);
  return url.toString();
}
