import path from 'node:path';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';

/** Paths that belong to the server, never to the page's client-side routes. */
const SERVER_PATHS = /^\/(hub|workflow|session|healthz|readyz|assets)(\/|$)/;

/**
 * The built single-page app: hashed files under `/assets` are cached for a year; `index.html` is never
 * cached and answers every other page address (`/w/dev/agents`), where the client-side router takes over.
 */
export function staticRoutes(publicDir: string): Router {
  const router = express.Router();
  router.use(
    '/assets',
    express.static(path.join(publicDir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      fallthrough: true,
    }),
  );
  router.use(express.static(publicDir, { index: false, maxAge: 0, fallthrough: true }));
  const index = path.join(publicDir, 'index.html');
  router.get(/.*/, (req: Request, res: Response, next: NextFunction) => {
    if (SERVER_PATHS.test(req.path) || !req.accepts('html')) return next();
    res.setHeader('Cache-Control', 'no-store');
    res.sendFile(index, (error) => {
      if (error) next(error);
    });
  });
  return router;
}
