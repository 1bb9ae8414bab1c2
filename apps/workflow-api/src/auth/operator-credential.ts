import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { safeEqual } from '@svc/auth';
import { AppError } from '@svc/service-kit';

/** The realm operators are asked to sign in to (the browser's prompt shows it). */
export const OPERATOR_REALM = 'svc operator';

/**
 * The operator's token from `Authorization`: `Bearer <token>`, or `Basic` with the token as the password (any
 * user name), which is what a browser sends after its sign-in prompt — the dashboard's own page requests carry
 * it that way without any script of ours. Undefined when neither is there.
 */
export function operatorTokenOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value] = header.trim().split(/\s+/, 2);
  if (!scheme || !value) return undefined;
  if (scheme.toLowerCase() === 'bearer') return value;
  if (scheme.toLowerCase() !== 'basic') return undefined;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : undefined;
}

/**
 * Requires the operator credential (`SVC_OPERATOR_TOKEN`), compared in constant time: none → 401 with the
 * Bearer and Basic challenges, a wrong one → 403. The token is never logged or echoed.
 */
export function requireOperator(expected: string): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    const presented = operatorTokenOf(req.headers.authorization);
    if (presented === undefined) {
      next(
        new AppError({
          status: 401,
          code: 'operator_credential_missing',
          detail: 'Send the operator token as a Bearer token (or as the password of Basic authentication).',
          headers: {
            'WWW-Authenticate': `Bearer realm="${OPERATOR_REALM}", Basic realm="${OPERATOR_REALM}", charset="UTF-8"`,
          },
        }),
      );
      return;
    }
    if (!safeEqual(presented, expected)) {
      next(
        new AppError({
          status: 403,
          code: 'operator_credential_invalid',
          detail: 'The operator token is not valid.',
        }),
      );
      return;
    }
    next();
  };
}
