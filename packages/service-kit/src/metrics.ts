import type { Express, NextFunction, Request, Response, Router } from 'express';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { z } from 'zod';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Where a request's operation id is kept for the HTTP metrics (`res.locals[OPERATION_LOCAL]`). */
export const OPERATION_LOCAL = 'svcOperationId';

/** The `operation` label of requests no operation of the contract answered (404, 405, bad JSON). */
export const UNMATCHED_OPERATION = 'unmatched';

/** What an app needs to be measured: the process's registry, and whether the app itself serves `/metrics`. */
export interface AppMetrics {
  registry: Registry;
  /**
   * Serve `GET /metrics` on this app. False when a separate listener serves it (see
   * {@link startMetricsListener}), so the public listener never answers it.
   */
  serveRoute: boolean;
}

/**
 * A registry for one service process: every series carries `service="<name>"`, and the process metrics of
 * prom-client (CPU, memory, event loop lag, GC, handles) are collected on scrape.
 */
export function createMetricsRegistry(service: string, options: { processMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Marks the request as answered by `operation` for the HTTP metrics (the operation router does this). */
export function labelOperation(res: Response, operation: string): void {
  res.locals[OPERATION_LOCAL] = operation;
}

/** The operation a finished request was labelled with. */
export function operationOf(res: Response): string {
  const operation = res.locals?.[OPERATION_LOCAL];
  return typeof operation === 'string' ? operation : UNMATCHED_OPERATION;
}

/** Mounts `GET /metrics` (Prometheus text format) on an app. */
export function mountMetricsRoute(app: Express | Router, registry: Registry): void {
  (app as Router).get('/metrics', (_req: Request, res: Response, next: NextFunction) => {
    labelOperation(res, 'metrics');
    registry.metrics().then(
      (text) => {
        res.status(200).set('Content-Type', registry.contentType).send(text);
      },
      (error: unknown) => next(error),
    );
  });
}

/**
 * An optional port setting for a separate metrics listener: unset or empty means `/metrics` is served on
 * the service's own listener.
 */
export function metricsPortField() {
  return z.preprocess(
    (value) => (value === '' ? undefined : value),
    z.coerce.number().int().min(1).max(65535).optional(),
  );
}
