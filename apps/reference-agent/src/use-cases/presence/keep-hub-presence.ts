import type { Logger } from '@svc/service-kit';
import { describeError, within } from '../../domain/call-policy';
import type { RetryPolicy } from '../../domain/call-policy';
import type { PlatformApi } from '../../data/platform-api';

export type HubStatus = 'idle' | 'busy';

export interface HubPresenceDeps {
  api: Pick<PlatformApi, 'hubHeartbeat'>;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line (the agent token). */
  secrets: string[];
  /** The agent's lifetime: once aborted, a heartbeat in flight is cancelled and no new one is sent. */
  lifetime: AbortSignal;
  /** The status to report now: `busy` while any stage is being worked. */
  status: () => HubStatus;
}

/**
 * Keeps the hub's roster informed: an `idle`/`busy` heartbeat every period, and at once when the status
 * changes. Calls made while a heartbeat is in flight coalesce into one more heartbeat after it.
 */
export class HubPresence {
  private sending: Promise<void> | undefined;
  private resend = false;
  private reported: HubStatus | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: HubPresenceDeps) {}

  /** Sends one hub heartbeat with the current status; calls made while one is in flight coalesce. */
  send(): Promise<void> {
    if (this.sending) {
      this.resend = true;
      return this.sending;
    }
    const { api, logger, policy, secrets, lifetime } = this.deps;
    const status = this.deps.status();
    this.sending = within(lifetime, policy.requestTimeoutMs, (s) => api.hubHeartbeat(status, s))
      .then(
        () => {
          if (this.reported !== status) logger.info({ status }, 'hub heartbeat: status reported');
          this.reported = status;
        },
        (error: unknown) => {
          if (lifetime.aborted) return;
          logger.warn({ status, error: describeError(error, secrets) }, 'hub heartbeat failed');
        },
      )
      .finally(() => {
        this.sending = undefined;
        if (this.resend && !lifetime.aborted) {
          this.resend = false;
          void this.send();
        }
      });
    return this.sending;
  }

  /** Reports a status change (idle ↔ busy) at once rather than at the next period. */
  statusChanged(): void {
    if (!this.deps.lifetime.aborted && this.deps.status() !== this.reported) void this.send();
  }

  /** Sends a heartbeat every `everyMs` until `stopPeriodic()`. */
  startPeriodic(everyMs: number): void {
    this.timer = setInterval(() => void this.send(), everyMs);
  }

  stopPeriodic(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Settles once no heartbeat is in flight (a heartbeat sent after this call is not awaited). */
  async idle(): Promise<void> {
    await this.sending;
  }
}
