import http from 'node:http';
import https from 'node:https';
import type { Request, Response } from 'express';
import { AppError } from '@svc/service-kit';
import { browserResponseHeaders, upstreamRequestHeaders } from '../../domain/forward-rules';
import type { ForwardContext } from '../../domain/forward-rules';

export interface Upstream {
  /** `http://127.0.0.1:4000` (no trailing slash). */
  base: string;
  /** The prefix the browser uses for it (`/hub`). */
  prefix: string;
}

/** How long an upstream may take to start answering. */
const ANSWER_TIMEOUT_MS = 60_000;

/**
 * Streams one browser request to the upstream and its answer back, body for body (nothing is buffered or
 * parsed here, so the upstream's own limits and validation apply). An upstream that cannot be reached is
 * 502 `upstream_unavailable`; one that does not start answering in time is 504 `upstream_timeout`.
 */
export function forwardRequest(
  upstream: Upstream,
  path: string,
  context: ForwardContext,
  req: Request,
  res: Response,
): Promise<void> {
  const target = new URL(`${upstream.base}${path}`);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const fail = (error: AppError) => {
      if (settled) return;
      settled = true;
      reject(error);
    };
    const outgoing = client.request(
      target,
      {
        method: req.method,
        headers: upstreamRequestHeaders(req.headers, context),
        timeout: ANSWER_TIMEOUT_MS,
      },
      (answer) => {
        if (settled) {
          answer.resume();
          return;
        }
        settled = true;
        res.status(answer.statusCode ?? 502);
        const headers = browserResponseHeaders(answer.headers, upstream.base, upstream.prefix);
        for (const [name, value] of Object.entries(headers)) {
          // The upstream's own policy wins for what it serves (its API reference pages are stricter still).
          res.setHeader(name, value);
        }
        answer.on('error', () => res.destroy());
        answer.pipe(res);
        resolve();
      },
    );
    outgoing.on('timeout', () => {
      outgoing.destroy();
      fail(
        new AppError({
          status: 504,
          code: 'upstream_timeout',
          detail: `${upstream.prefix} did not answer in time.`,
        }),
      );
    });
    outgoing.on('error', (error) =>
      fail(
        new AppError({
          status: 502,
          code: 'upstream_unavailable',
          detail: `${upstream.prefix} cannot be reached right now.`,
          message: `forwarding to ${upstream.prefix} failed: ${error.message}`,
        }),
      ),
    );
    // The browser went away before the answer ended: stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  });
}
