import { Counter, Gauge } from '@svc/service-kit/http';
import type { Registry } from '@svc/service-kit/http';

/**
 * The proxy's counts, kept as plain numbers: the forwarding path only increments a field (no label look-up,
 * no allocation); the Prometheus counters read them when scraped (see {@link registerProxyMetrics}).
 */
export class ProxyStats {
  /** HTTP requests handed to an agent. */
  http = 0;
  /** WebSocket upgrades handed to an agent. */
  ws = 0;
  /** Agents' HTTP answers by status class: index 1 = 1xx … 5 = 5xx (0: anything else). */
  readonly answers = [0, 0, 0, 0, 0, 0];
  /** HTTP requests that failed at the agent: unreachable, or the connection lost mid-answer. */
  httpUpstreamErrors = 0;
  /** WebSocket upgrades the agent could not be reached for, or that failed before the switch. */
  wsUpstreamErrors = 0;
  /** Requests and upgrades answered by the router itself with a refusal, by status code. */
  readonly refusals = new Map<number, number>();

  answered(status: number): void {
    const index = Math.floor(status / 100);
    this.answers[index >= 1 && index <= 5 ? index : 0]! += 1;
  }

  refused(status: number): void {
    this.refusals.set(status, (this.refusals.get(status) ?? 0) + 1);
  }
}

/** A counter whose totals are read from `totals()` on scrape (labelled by the keys it returns). */
function scrapedCounter(
  registry: Registry,
  definition: { name: string; help: string; label: string },
  totals: () => Iterable<[string, number]>,
): void {
  const reported = new Map<string, number>();
  new Counter({
    name: definition.name,
    help: definition.help,
    labelNames: [definition.label],
    registers: [registry],
    collect() {
      for (const [value, total] of totals()) {
        const before = reported.get(value);
        if (before === undefined || total > before) {
          this.inc({ [definition.label]: value }, total - (before ?? 0));
          reported.set(value, total);
        }
      }
    },
  });
}

const CLASSES = ['other', '1xx', '2xx', '3xx', '4xx', '5xx'];

/**
 * The console router's proxy series: `svc_console_router_proxied_requests_total{kind}` (http, websocket),
 * `svc_console_router_upstream_answers_total{class}`, `svc_console_router_upstream_errors_total{kind}`,
 * `svc_console_router_refused_total{status}` and the gauge `svc_console_router_open_websockets`.
 */
export function registerProxyMetrics(
  registry: Registry,
  stats: ProxyStats,
  openWebSockets: () => number,
): void {
  scrapedCounter(
    registry,
    {
      name: 'svc_console_router_proxied_requests_total',
      help: 'Requests (kind=http) and WebSocket upgrades (kind=websocket) forwarded to agents.',
      label: 'kind',
    },
    () => [
      ['http', stats.http],
      ['websocket', stats.ws],
    ],
  );
  scrapedCounter(
    registry,
    {
      name: 'svc_console_router_upstream_answers_total',
      help: "Agents' HTTP answers passed back to callers, by status class.",
      label: 'class',
    },
    () => stats.answers.map((count, index): [string, number] => [CLASSES[index]!, count]).slice(1),
  );
  scrapedCounter(
    registry,
    {
      name: 'svc_console_router_upstream_errors_total',
      help: 'Forwarded requests (kind=http) and upgrades (kind=websocket) that failed at the agent: not reachable or cut mid-answer.',
      label: 'kind',
    },
    () => [
      ['http', stats.httpUpstreamErrors],
      ['websocket', stats.wsUpstreamErrors],
    ],
  );
  scrapedCounter(
    registry,
    {
      name: 'svc_console_router_refused_total',
      help: 'Agent route requests and upgrades the router refused itself (404, 503, 401, 403 …), by status.',
      label: 'status',
    },
    () => [...stats.refusals].map(([status, count]): [string, number] => [String(status), count]),
  );
  new Gauge({
    name: 'svc_console_router_open_websockets',
    help: 'WebSockets open through the router to agents.',
    registers: [registry],
    collect() {
      this.set(openWebSockets());
    },
  });
}
