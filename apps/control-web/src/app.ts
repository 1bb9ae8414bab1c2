import path from 'node:path';
import express from 'express';
import type { ErrorRequestHandler, Express, NextFunction, Request, Response } from 'express';
import { AppError, createSecretBox, requestId, scrubSecrets, sendProblem } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import { csrfGuard, sessionReader } from './auth/session';
import { cookieName } from './domain/session-cookie';
import { securityHeaders } from './domain/security-headers';
import type { ControlWebConfig } from './env';
import { forwardRoutes } from './routes/forward.routes';
import { healthRoutes } from './routes/health.routes';
import { sessionRoutes } from './routes/session.routes';
import { staticRoutes } from './routes/static.routes';

export interface ControlWebServiceOptions {
  config: ControlWebConfig;
  logger: Logger;
}

export interface ControlWebService {
  app: Express;
}

/**
 * The control web app's server, wired from explicit options (`main.ts` and the tests build it here): security
 * headers on every answer, request ids and an access log, the session cookie, the CSRF guard, the session
 * routes, the forwarded APIs, the built page, and problem+json for every failure.
 */
export function createControlWebService(options: ControlWebServiceOptions): ControlWebService {
  const { config, logger } = options;
  const publicDir = config.staticDir ?? path.join(__dirname, 'public');
  const cookie = { name: cookieName(config.secure), secure: config.secure };
  const box = createSecretBox(config.sessionKeys);
  const headers = securityHeaders({ consoleOrigins: config.consoleOrigins, secure: config.secure });

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  if (config.trustProxy !== undefined) app.set('trust proxy', config.trustProxy);
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.set(headers);
    next();
  });
  app.use(requestId());
  app.use((req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const level = res.statusCode >= 500 ? 'error' : 'info';
      logger[level](
        {
          request_id: req.requestId,
          method: req.method,
          path: scrubSecrets(req.originalUrl.split('?')[0] ?? ''),
          status: res.statusCode,
          duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        },
        'request',
      );
    });
    next();
  });

  app.use(healthRoutes({ publicDir, hubUrl: config.hubUrl, workflowUrl: config.workflowUrl }));
  app.use(sessionReader(box, cookie));
  app.use(csrfGuard());
  app.use(sessionRoutes({ hubUrl: config.hubUrl, box, cookie }));
  app.use(
    forwardRoutes([
      { base: config.hubUrl, prefix: '/hub' },
      { base: config.workflowUrl, prefix: '/workflow' },
    ]),
  );
  app.use(staticRoutes(publicDir));

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(
      new AppError({
        status: 404,
        code: 'route_not_found',
        detail: `No route for ${req.method} ${req.path}.`,
      }),
    );
  });
  // This server has no page per problem code: `about:blank` says the code and title are the whole story.
  const onError: ErrorRequestHandler = (error, req, res, _next) =>
    sendProblem(res, error, req, logger, { type: 'about:blank' });
  app.use(onError);
  return { app };
}
