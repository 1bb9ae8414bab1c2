import { randomBytes } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Id of this request: the caller's `x-request-id` when well-formed, otherwise a fresh one. */
      requestId: string;
    }
  }
}

const ACCEPTED = /^[A-Za-z0-9._:-]{8,128}$/;

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}

export function requestId() {
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header('x-request-id');
    req.requestId = incoming && ACCEPTED.test(incoming) ? incoming : newRequestId();
    res.setHeader('x-request-id', req.requestId);
    next();
  };
}
