import type { Request, Response } from 'express';
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import { operationOf } from './metrics';

/** Request counts and durations of an HTTP app, by operation id and status. */
export interface HttpMetrics {
  /** Records one finished request (`seconds` from its arrival to the end of the answer). */
  observe(req: Request, res: Response, seconds: number): void;
}

/** Upper bounds (seconds) of the request duration histogram: 5 ms to 10 s. */
export const HTTP_DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const byRegistry = new WeakMap<Registry, HttpMetrics>();

/**
 * The HTTP series of a registry (made once per registry, so apps sharing a process registry share them):
 * `svc_http_requests_total` and `svc_http_request_duration_seconds`, labelled with the contract's
 * `operation` id (`unmatched` for requests no operation answered, `metrics` for scrapes) and the `status`
 * code. Labels never hold a raw path, so the number of series is bounded by the contract.
 */
export function httpMetricsOf(registry: Registry): HttpMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const requests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests answered, by contract operation id and status code.',
    labelNames: ['operation', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time from the arrival of an HTTP request to the end of its answer, by operation id and status code.',
    labelNames: ['operation', 'status'] as const,
    buckets: HTTP_DURATION_BUCKETS,
    registers: [registry],
  });
  const metrics: HttpMetrics = {
    observe(_req, res, seconds) {
      const labels = { operation: operationOf(res), status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
