import express from 'express';
import type { Router } from 'express';
import { AppError } from '@svc/service-kit';
import { sessionOf } from '../auth/session';
import { forwardedPath } from '../domain/forward-rules';
import { forwardRequest } from '../use-cases/forward/forward-request';
import type { Upstream } from '../use-cases/forward/forward-request';

/**
 * `/hub/…` and `/workflow/…`: the public API and API reference of each upstream, forwarded with the
 * session's token as `Authorization: Bearer`. Any other path under the prefix (internal routes, odd
 * spellings) is 404 `route_not_forwarded` and never leaves this server.
 */
export function forwardRoutes(upstreams: Upstream[]): Router {
  const router = express.Router();
  for (const upstream of upstreams) {
    router.use(upstream.prefix, async (req, res) => {
      // req.url is the part after the prefix; originalUrl keeps the raw spelling the browser sent.
      const rest = req.originalUrl.slice(upstream.prefix.length) || '/';
      const path = forwardedPath(rest);
      if (!path) {
        throw new AppError({
          status: 404,
          code: 'route_not_forwarded',
          detail: `Only the public API (${upstream.prefix}/api/v1/…) and ${upstream.prefix}/docs are forwarded.`,
        });
      }
      await forwardRequest(
        upstream,
        path,
        {
          token: sessionOf(res)?.token,
          clientAddress: req.ip,
          protocol: req.protocol,
          host: req.get('host'),
        },
        req,
        res,
      );
    });
  }
  return router;
}
