import type { Logger } from '@svc/service-kit/http';
import { RouteTable } from '../domain/route-table';
import type { HubRouteTable } from '../domain/route-table';

export interface RouteTableSourceOptions {
  hubUrl: string;
  /** The host's inventory id (`rti_…`); missing, nothing is loaded and readiness names it. */
  hostId: string | undefined;
  /** The host's runtime key (`runtime-config:read`) at start; missing, likewise. {@link RouteTableSource.setApiKey} replaces it. */
  apiKey: string | undefined;
  pollMs: number;
  /** How long the hub has to answer one load. */
  timeoutMs: number;
  logger: Logger;
  fetch?: typeof fetch;
  now?: () => Date;
}

/** The table in use and how its last load went. */
export interface RouteTableState {
  table: RouteTable | undefined;
  loadedAt: Date | undefined;
  /** Why the last load failed (undefined when it succeeded or none ran yet). */
  lastError: string | undefined;
}

/** A load that failed; the message names the cause, never the hub URL or the key. */
export class RouteTableUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RouteTableUnavailableError';
  }
}

function describeFailure(error: unknown, timeoutMs: number): string {
  const err = error as { name?: string; cause?: { code?: unknown } };
  if (err?.name === 'TimeoutError') return `hub did not answer within ${timeoutMs} ms`;
  const code = typeof err?.cause?.code === 'string' ? ` (${err.cause.code})` : '';
  return `hub unreachable${code}`;
}

/** Least time between two reloads caused by requests for agents the table does not know. */
export const MISS_REFRESH_INTERVAL_MS = 1_000;

/**
 * The host's console route table from the hub (`GET /api/v1/runtime-hosts/{hostId}/console-routes`): polled
 * every `pollMs` with `If-None-Match`, so an unchanged table costs a 304; reloaded at once by `refresh()`
 * (concurrent calls share one request). A failed load keeps the last good table in use.
 */
export class RouteTableSource {
  private table: RouteTable | undefined;
  private loadedAt: Date | undefined;
  private lastError: string | undefined;
  private inflight: Promise<RouteTable> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly changeListeners: ((table: RouteTable) => void)[] = [];
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => Date;
  private readonly url: string | undefined;
  private lastMissRefresh = Number.NEGATIVE_INFINITY;
  private apiKey: string | undefined;

  constructor(private readonly options: RouteTableSourceOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.now = options.now ?? (() => new Date());
    this.apiKey = options.apiKey;
    if (options.hostId) {
      const base = new URL(options.hubUrl);
      base.username = '';
      base.password = '';
      this.url = new URL(
        `api/v1/runtime-hosts/${encodeURIComponent(options.hostId)}/console-routes`,
        base.toString().replace(/\/*$/, '/'),
      ).toString();
    }
  }

  /** Settings the source needs and does not have, by variable name. */
  missingSettings(): string[] {
    return [
      ...(this.options.hostId ? [] : ['SVC_RUNTIME_INSTANCE_ID']),
      ...(this.apiKey ? [] : ['SVC_WORKSPACE_API_KEY']),
    ];
  }

  /** The runtime key in use. */
  currentApiKey(): string | undefined {
    return this.apiKey;
  }

  /**
   * Uses `apiKey` from the next load on (a rotated runtime key, re-read on SIGHUP); a load already under way
   * finishes with the key it was sent with.
   */
  setApiKey(apiKey: string): void {
    this.apiKey = apiKey;
  }

  current(): RouteTable | undefined {
    return this.table;
  }

  state(): RouteTableState {
    return { table: this.table, loadedAt: this.loadedAt, lastError: this.lastError };
  }

  /** Loads the table now; resolves with the table in use, rejects (keeping the last good one) on failure. */
  refresh(): Promise<RouteTable> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /**
   * A reload for a request naming an agent the table does not know — typically one started since the last
   * poll, so it is routable at once even when nothing called `POST /routes/refresh`. At most one such reload
   * starts per {@link MISS_REFRESH_INTERVAL_MS}, so requests for unknown agents cannot turn into a stream of hub
   * requests; resolves with the table in use (the last good one when the hub does not answer).
   */
  async refreshOnMiss(): Promise<RouteTable | undefined> {
    const now = this.now().getTime();
    if (!this.inflight) {
      if (now - this.lastMissRefresh < MISS_REFRESH_INTERVAL_MS) return this.table;
      this.lastMissRefresh = now;
    }
    return this.refresh().catch(() => this.table);
  }

  /** Loads once, then every `pollMs` until {@link stop}. */
  start(): void {
    this.stopped = false;
    const tick = () => {
      this.refresh()
        .catch(() => undefined)
        .finally(() => {
          if (!this.stopped) {
            this.timer = setTimeout(tick, this.options.pollMs);
            this.timer.unref();
          }
        });
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async load(): Promise<RouteTable> {
    const missing = this.missingSettings();
    if (missing.length > 0 || !this.url) {
      throw this.failed(`${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`);
    }
    const { timeoutMs } = this.options;
    let res: Response;
    try {
      res = await this.fetchImpl(this.url, {
        headers: {
          accept: 'application/json',
          'x-api-key': this.apiKey!,
          ...(this.table ? { 'if-none-match': `"${this.table.version}"` } : {}),
        },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw this.failed(describeFailure(error, timeoutMs));
    }
    if (res.status === 304 && this.table) {
      await res.body?.cancel().catch(() => undefined);
      return this.loaded(this.table);
    }
    if (res.status !== 200) {
      const body = (await res.json().catch(() => undefined)) as { code?: unknown } | undefined;
      const code = typeof body?.code === 'string' ? ` ${body.code}` : '';
      throw this.failed(`hub answered HTTP ${res.status}${code}`);
    }
    let data: HubRouteTable | undefined;
    try {
      data = ((await res.json()) as { data?: HubRouteTable }).data;
    } catch {
      throw this.failed('hub answered with invalid JSON');
    }
    if (
      !data ||
      typeof data.version !== 'string' ||
      !Array.isArray(data.routes) ||
      !Array.isArray(data.members)
    ) {
      throw this.failed('hub answered without a route table');
    }
    const previous = this.table?.version;
    const table = new RouteTable(data);
    if (previous !== table.version) {
      this.options.logger.info(
        { version: table.version, routes: table.routes.length, previous_version: previous ?? null },
        'route table loaded',
      );
    }
    return this.loaded(table);
  }

  /** Calls `listener` with every table whose version differs from the one before (not the first one). */
  onChange(listener: (table: RouteTable) => void): void {
    this.changeListeners.push(listener);
  }

  private loaded(table: RouteTable): RouteTable {
    if (this.lastError) this.options.logger.info('route table reachable again');
    const previous = this.table;
    this.table = table;
    this.loadedAt = this.now();
    this.lastError = undefined;
    if (previous && previous.version !== table.version) {
      for (const listener of this.changeListeners) listener(table);
    }
    return table;
  }

  private failed(reason: string): RouteTableUnavailableError {
    if (reason !== this.lastError) {
      this.options.logger.warn(
        { reason, routes_kept: this.table?.routes.length ?? 0 },
        'route table could not be loaded; the last good table stays in use',
      );
    }
    this.lastError = reason;
    return new RouteTableUnavailableError(reason);
  }
}
