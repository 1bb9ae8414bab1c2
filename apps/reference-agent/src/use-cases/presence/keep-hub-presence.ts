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
  /** How long the agent stays idle before `idle` is reported after `busy` (default {@link IDLE_REPORT_DELAY_MS}). */
  idleReportDelayMs?: number;
}

/**
 * How long an agent that finished its stages stays idle before it reports `idle`. An agent working stage after
 * stage (a burst, or one run at a time) is idle for a few milliseconds between them: reporting each gap cost two
 * hub heartbeats per stage (each a request and a transaction at the hub) for a status that nothing decides on
 * (the engine counts an agent's open stages itself). Shown `busy` for a second longer instead.
 */
export const IDLE_REPORT_DELAY_MS = 1_000;

/**
 * Keeps the hub's roster informed: an `idle`/`busy` heartbeat every period; `busy` at once when work starts,
 * `idle` once the agent has stayed idle for `idleReportDelayMs`. Calls made while a heartbeat is in flight
 * coalesce into one more heartbeat after it.
 */
export class HubPresence {
  private sending: Promise<void> | undefined;
  private resend = false;
  private reported: HubStatus | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Pending report of `idle`, cancelled when work starts again first. */
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: HubPresenceDeps) {}

  /** Sends one hub heartbeat with the current status; calls made while one is in flight coalesce. */
  send(): Promise<void> {
    if (this.sending) {
      this.resend = true;
      return this.sending;
    }
    const { api, logger, policy, secrets, lifetime } = this.deps;
    const status = this.deps.status();
    let delivered = false;
    this.sending = within(lifetime, policy.requestTimeoutMs, (s) => api.hubHeartbeat(status, s))
      .then(
        () => {
          if (this.reported !== status) logger.info({ status }, 'hub heartbeat: status reported');
          this.reported = status;
          delivered = true;
        },
        (error: unknown) => {
          if (lifetime.aborted) return;
          logger.warn({ status, error: describeError(error, secrets) }, 'hub heartbeat failed');
        },
      )
      .finally(() => {
        this.sending = undefined;
        if (lifetime.aborted) return;
        if (this.resend) {
          this.resend = false;
          void this.send();
        } else if (delivered) {
          // The status may have changed while this heartbeat was in flight (a stage that started and ended).
          this.statusChanged();
        }
      });
    return this.sending;
  }

  /**
   * Reports a status change rather than waiting for the next period: `busy` at once, `idle` after the agent has
   * stayed idle for `idleReportDelayMs` (work starting again meanwhile cancels it).
   */
  statusChanged(): void {
    if (this.deps.lifetime.aborted) return;
    const status = this.deps.status();
    if (status === 'busy' || status === this.reported) {
      this.cancelIdleReport();
      if (status !== this.reported) void this.send();
      return;
    }
    this.idleTimer ??= setTimeout(() => {
      this.idleTimer = undefined;
      if (!this.deps.lifetime.aborted && this.deps.status() !== this.reported) void this.send();
    }, this.deps.idleReportDelayMs ?? IDLE_REPORT_DELAY_MS);
  }

  /** Sends a heartbeat every `everyMs` until `stopPeriodic()`. */
  startPeriodic(everyMs: number): void {
    this.timer = setInterval(() => void this.send(), everyMs);
  }

  /** Stops the periodic heartbeat and any pending report of `idle`. */
  stopPeriodic(): void {
    if (this.timer) clearInterval(this.timer);
    this.cancelIdleReport();
  }

  private cancelIdleReport(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** Settles once no heartbeat is in flight (a heartbeat sent after this call is not awaited). */
  async idle(): Promise<void> {
    await this.sending;
  }
}
