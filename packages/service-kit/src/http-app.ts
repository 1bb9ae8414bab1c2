import express from 'express';
import type { ErrorRequestHandler, Express, NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppError, toProblem } from './errors';
import { mountMetricsRoute } from './metrics';
import type { AppMetrics } from './metrics';
import { httpMetricsOf } from './metrics-http';
import { requestId } from './request-id';
import { scrubSecrets } from './secrets';
import { tracingMiddleware } from './tracing';

export interface HttpAppOptions {
  logger: Logger;
  /** Largest JSON body accepted (bytes or a string like `1mb`); larger ones get 413. */
  bodyLimit?: number | string;
  /** Express `trust proxy` setting, for deployments behind a load balancer. */
  trustProxy?: boolean | number | string;
  /** Mounts the app's routes. */
  configure: (app: Express) => void;
  /** Count and time every request by operation id and status; serve `GET /metrics` when asked to. */
  metrics?: AppMetrics;
}

/**
 * Answers `error` as problem+json (internal errors logged, details hidden). `type` replaces the problem's
 * `/docs/errors/<code>` reference, for a server that serves no page per code (`about:blank`).
 */
export function sendProblem(
  res: Response,
  error: unknown,
  req: Request,
  logger: Logger,
  options: { type?: string } = {},
): void {
  const problem = toProblem(error, req.requestId);
  if (problem.internal) {
    logger.error(
      { err: error, request_id: req.requestId, method: req.method, path: req.path },
      'request failed',
    );
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(problem.status)
    .set(problem.headers)
    .type('application/problem+json')
    .send(JSON.stringify(options.type ? { ...problem.body, type: options.type } : problem.body));
}

/**
 * Express app with the platform's common edge: request ids, access log, JSON bodies with a size limit,
 * problem+json for every failure (including malformed JSON → 400 and oversized bodies → 413) and a JSON 404.
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const { logger } = options;
  const httpMetrics = options.metrics ? httpMetricsOf(options.metrics.registry) : undefined;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  if (options.trustProxy !== undefined) app.set('trust proxy', options.trustProxy);

  app.use(requestId());
  // One server span per request while tracing is on (nothing is mounted while it is off).
  const tracing = tracingMiddleware();
  if (tracing) app.use(tracing);
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      httpMetrics?.observe(req, res, durationMs / 1000);
      // 503 is an expected answer (not ready, dependency down), not a fault of ours.
      const level = res.statusCode >= 500 ? (res.statusCode === 503 ? 'warn' : 'error') : 'info';
      // The entry (its path scrubbed) is built only when its level is logged: a burst at `warn` skips it.
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          request_id: req.requestId,
          method: req.method,
          path: scrubSecrets(req.originalUrl.split('?')[0] ?? ''),
          status: res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
        },
        'request',
      );
    });
    next();
  });
  app.use(
    express.json({
      limit: options.bodyLimit ?? '1mb',
      type: ['application/json', 'application/*+json'],
    }),
  );

  if (options.metrics?.serveRoute) mountMetricsRoute(app, options.metrics.registry);
  options.configure(app);

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(
      new AppError({
        status: 404,
        code: 'route_not_found',
        detail: `No route for ${req.method} ${req.path}.`,
      }),
    );
  });
  const onError: ErrorRequestHandler = (error, req, res, _next) => sendProblem(res, error, req, logger);
  app.use(onError);
  return app;
}
