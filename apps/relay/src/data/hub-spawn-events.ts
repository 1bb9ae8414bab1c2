import { traceHeaders } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';

export interface SpawnEvent {
  spawn_id: string;
  event: 'requested' | 'started' | 'failed';
  agent_name: string;
  agent_id?: string;
  code?: string;
  detail?: string;
}

/**
 * Reports spawn events to the hub's audit (`relay.spawn.<event>`) with the host's workspace API key. Reports
 * are sent in order, one at a time, each retried a few times; a report that cannot be delivered is logged (the
 * local spawn log keeps the record either way) and never delays or fails the spawn itself.
 */
export class HubSpawnEvents {
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly options: {
      hubUrl: string | undefined;
      apiKey: string | undefined;
      runtimeInstanceId: string | undefined;
      logger: Logger;
      timeoutMs?: number;
    },
  ) {}

  report(event: SpawnEvent): void {
    this.queue = this.queue.then(() => this.send(event));
  }

  /** Resolves when every report so far was delivered or given up on. */
  flushed(): Promise<void> {
    return this.queue;
  }

  private async send(event: SpawnEvent): Promise<void> {
    const { hubUrl, apiKey, runtimeInstanceId, logger } = this.options;
    if (!hubUrl || !apiKey || !runtimeInstanceId) {
      logger.warn(
        { spawn_id: event.spawn_id, event: event.event },
        'spawn event not reported: the hub is not configured',
      );
      return;
    }
    const url = `${hubUrl.replace(/\/+$/, '')}/api/v1/runtime-hosts/${encodeURIComponent(runtimeInstanceId)}/spawn-events`;
    let lastStatus: number | string = 'none';
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...traceHeaders() },
          body: JSON.stringify(event),
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
        });
        await res.body?.cancel();
        if (res.ok) return;
        lastStatus = res.status;
        if (res.status < 500 && res.status !== 429) break;
      } catch (error) {
        lastStatus = (error as Error).name;
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
    }
    logger.warn(
      { spawn_id: event.spawn_id, event: event.event, status: lastStatus },
      'spawn event not reported to the hub',
    );
  }
}
