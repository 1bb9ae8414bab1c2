import type { NextFunction, Request, Response } from 'express';
import { AppError } from '@svc/service-kit';
import type { SecretBox } from '@svc/service-kit';
import { clearedCookie, openSession, readCookie } from '../domain/session-cookie';
import type { CookieSettings, Session } from '../domain/session-cookie';

/** The header every state-changing request must carry (a page of another site cannot add it without CORS). */
export const CSRF_HEADER = 'x-svc-csrf';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request's session (set by {@link sessionReader}); undefined when signed out. */
export function sessionOf(res: Response): Session | undefined {
  return res.locals.session as Session | undefined;
}

/**
 * Opens the session cookie of each request. A cookie that does not open (another key, altered, expired) is
 * removed in the answer, so the browser stops sending it.
 */
export function sessionReader(box: SecretBox, cookie: CookieSettings) {
  return (req: Request, res: Response, next: NextFunction) => {
    const value = readCookie(req.headers.cookie, cookie.name);
    if (value) {
      const session = openSession(box, value);
      if (session) res.locals.session = session;
      else res.append('Set-Cookie', clearedCookie(cookie));
    }
    next();
  };
}

/**
 * Cross-site request forgery guard for state-changing requests: the custom header must be present, and the
 * browser's `Sec-Fetch-Site` and `Origin` (when sent) must name this origin. The session cookie is also
 * SameSite=Strict; this guard holds even where that is not honoured.
 */
export function csrfGuard() {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (SAFE_METHODS.has(req.method)) return next();
    const refuse = (detail: string) => next(new AppError({ status: 403, code: 'csrf_check_failed', detail }));
    if (req.header(CSRF_HEADER) !== '1')
      return refuse(`A state-changing request must carry ${CSRF_HEADER}: 1.`);
    const site = req.header('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin') return refuse('The request came from another site.');
    const origin = req.header('origin');
    if (origin !== undefined) {
      let host: string | undefined;
      try {
        host = new URL(origin).host;
      } catch {
        host = undefined;
      }
      if (host === undefined || host !== req.get('host'))
        return refuse('The request came from another origin.');
    }
    next();
  };
}
