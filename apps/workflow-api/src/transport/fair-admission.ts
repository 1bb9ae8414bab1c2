import { actorIdentity } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AdmissionSettings } from '../domain/admission-settings';
import { FairQueue } from '../domain/fair-queue';

/** Why a request was refused admission (the label of the refusal counter). */
export type AdmissionRefusal = 'queue_timeout' | 'queue_full' | 'client_gone';

export interface AdmissionStats {
  inFlight: number;
  queued: number;
  waitingKeys: number;
}

export interface Admission {
  /** Express middleware, run once the credential is resolved: waits for the request's turn, then `next()`. */
  middleware: RequestHandler;
  stats(): AdmissionStats;
}

/**
 * The key a request is admitted under: the project of `/projects/{projectId}/…`, the agent itself on an agent's
 * own routes (`/agents/me/…`; an agent token names no project), the workspace of `/workspaces/{workspaceId}/…`,
 * else the caller. Only authenticated requests are keyed (the credential was verified before), so no caller
 * without a credential can queue requests under another's key; a request without an actor is not queued (it is
 * answered 401 right after).
 */
export function admissionKey(req: Request): string | undefined {
  const actor = req.actor;
  if (!actor) return undefined;
  const params = req.params as Record<string, unknown>;
  if (typeof params.projectId === 'string') return `project:${params.projectId}`;
  if (actor.kind === 'agent') return `agent:${actor.agentId}`;
  if (typeof params.workspaceId === 'string') return `workspace:${params.workspaceId}`;
  const { kind, id } = actorIdentity(actor);
  return `${kind}:${id ?? ''}`;
}

/** What a ticket asks of its admission. */
interface TicketOwner {
  release(ticket: Ticket): void;
  acquire(ticket: Ticket): Promise<void>;
}

/** One request's place: waiting for a slot, holding one, set aside while held (long-poll), or done. */
class Ticket {
  state: 'waiting' | 'admitted' | 'set_aside' | 'ended' = 'waiting';
  private settle: ((error?: AppError) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly key: string,
    private readonly owner: TicketOwner,
  ) {}

  /** Resolves when admitted; rejects with the AppError it is refused with. */
  wait(timeoutMs: number, onTimeout: () => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.settle = (error) => {
        clearTimeout(this.timer);
        this.settle = undefined;
        if (error) reject(error);
        else resolve();
      };
      this.timer = setTimeout(onTimeout, timeoutMs);
    });
  }

  admitted(): void {
    this.state = 'admitted';
    this.settle?.();
  }

  refused(error: AppError): void {
    this.state = 'ended';
    this.settle?.(error);
  }

  /** A held request only waits now: its slot goes to others. */
  setAside(): boolean {
    if (this.state !== 'admitted') return false;
    this.state = 'set_aside';
    this.owner.release(this);
    return true;
  }

  /** The held request has work again: it takes its turn for a slot (unless it is done meanwhile). */
  resume(): Promise<void> {
    return this.state === 'set_aside' ? this.owner.acquire(this) : Promise.resolve();
  }
}

/** Tickets of the requests in the process, by request (a held request sets its slot aside through it). */
const tickets = new WeakMap<Request, Ticket>();

function overloaded(settings: AdmissionSettings, detail: string): AppError {
  return new AppError({
    status: 503,
    code: 'overloaded',
    detail,
    headers: { 'Retry-After': String(settings.retryAfterSeconds) },
  });
}

/**
 * Admission by key (decision 100): a request holds a slot from its turn until its response is done (or its
 * client went away). Waiting requests are admitted fairly across keys (see FairQueue); one that waits longer
 * than `queueTimeoutMs`, arrives when `maxQueued` wait, or whose client goes away while it waits is answered
 * 503 `overloaded` with `Retry-After` — never dropped, never a 500.
 */
export function createAdmission(
  settings: AdmissionSettings,
  hooks: { refused?: (reason: AdmissionRefusal) => void } = {},
): Admission {
  const queue = new FairQueue<Ticket>(settings);

  const refuse = (ticket: Ticket, reason: AdmissionRefusal, detail: string) => {
    hooks.refused?.(reason);
    ticket.refused(overloaded(settings, detail));
  };

  const owner: TicketOwner = {
    release(ticket) {
      for (const { item } of queue.release(ticket.key)) item.admitted();
    },
    acquire(ticket) {
      ticket.state = 'waiting';
      const offer = queue.offer(ticket.key, ticket);
      if (offer === 'admitted') {
        ticket.state = 'admitted';
        return Promise.resolve();
      }
      if (offer === 'refused') {
        hooks.refused?.('queue_full');
        ticket.state = 'ended';
        return Promise.reject(
          overloaded(settings, 'Too many requests are waiting; retry after Retry-After.'),
        );
      }
      return ticket.wait(settings.queueTimeoutMs, () => {
        if (queue.remove(ticket.key, ticket)) {
          refuse(
            ticket,
            'queue_timeout',
            'The request waited too long for its turn; retry after Retry-After.',
          );
        }
      });
    },
  };

  /** The request is done (answered, or its client went away): its slot or its place in the line goes. */
  const end = (ticket: Ticket) => {
    if (ticket.state === 'admitted') {
      ticket.state = 'ended';
      owner.release(ticket);
    } else if (ticket.state === 'waiting' && queue.remove(ticket.key, ticket)) {
      refuse(ticket, 'client_gone', 'The client went away before the request was admitted.');
    } else {
      ticket.state = 'ended';
    }
  };

  const middleware: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    const key = admissionKey(req);
    if (key === undefined) {
      next();
      return;
    }
    const ticket = new Ticket(key, owner);
    tickets.set(req, ticket);
    // 'close' comes once the response is done or when the client goes away, whichever is first.
    res.once('close', () => end(ticket));
    owner.acquire(ticket).then(
      () => next(),
      (error: unknown) => next(error),
    );
  };

  return {
    middleware,
    stats: () => ({ inFlight: queue.inFlight, queued: queue.queued, waitingKeys: queue.waitingKeys }),
  };
}

/**
 * Runs `hold` (a held request's wait for a change) with the request's slot set aside, so a long-poll does not
 * keep others out while it only waits; then the request takes its turn again for the work after the wait (a
 * refusal then is an `overloaded` error). A request that was not admitted here runs `hold` as it is.
 */
export async function withSlotSetAside<T>(req: Request, hold: () => Promise<T>): Promise<T> {
  const ticket = tickets.get(req);
  if (!ticket?.setAside()) return hold();
  try {
    return await hold();
  } finally {
    await ticket.resume();
  }
}
