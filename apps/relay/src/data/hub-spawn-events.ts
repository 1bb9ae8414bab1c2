import { createHubClient } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';

export type SpawnEvent = HubApi.components['schemas']['RelaySpawnEvent'];

/**
 * Reports spawn events to the hub's audit (`relay.spawn.<event>`) with the host's workspace API key. Reports
 * are sent in order, one at a time, each retried a few times; a report that cannot be delivered is logged (the
 * local spawn log keeps the record either way) and never delays or fails the spawn itself.
 */
export class HubSpawnEvents {
  private queue: Promise<void> = Promise.resolve();
  private readonly hub: HubClient | undefined;
  private readonly apiKey: () => string | undefined;

  constructor(
    private readonly options: {
      hubUrl: string | undefined;
      /** The workspace API key, read at every report (it may be replaced on SIGHUP). */
      apiKey: string | undefined | (() => string | undefined);
      runtimeInstanceId: string | undefined;
      logger: Logger;
      timeoutMs?: number;
    },
  ) {
    const { apiKey } = options;
    this.apiKey = typeof apiKey === 'function' ? apiKey : () => apiKey;
    this.hub = options.hubUrl ? createHubClient({ baseUrl: options.hubUrl, clientName: 'relay' }) : undefined;
    this.hub?.use({
      onRequest: ({ request }) => {
        const key = this.apiKey();
        if (key) request.headers.set('x-api-key', key);
        return request;
      },
    });
  }

  report(event: SpawnEvent): void {
    this.queue = this.queue.then(() => this.send(event));
  }

  /** Resolves when every report so far was delivered or given up on. */
  flushed(): Promise<void> {
    return this.queue;
  }

  private async send(event: SpawnEvent): Promise<void> {
    const { runtimeInstanceId, logger } = this.options;
    if (!this.hub || !this.apiKey() || !runtimeInstanceId) {
      logger.warn(
        { spawn_id: event.spawn_id, event: event.event },
        'spawn event not reported: the hub is not configured',
      );
      return;
    }
    let lastStatus: number | string = 'none';
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const { response } = await this.hub.POST('/api/v1/runtime-hosts/{hostId}/spawn-events', {
          params: { path: { hostId: runtimeInstanceId } },
          body: event,
          signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000),
        });
        if (response.ok) return;
        lastStatus = response.status;
        if (response.status < 500 && response.status !== 429) break;
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
