import { randomBytes } from 'node:crypto';

/** A request id the caller sent that the router keeps (and passes on) rather than making its own. */
const ACCEPTED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * Request ids for the proxied routes: `req_<random process prefix><counter>`, unique within the process (the
 * counter) and across processes with overwhelming likelihood (12 random base64url characters drawn once at
 * start). Drawing random bytes per request cost more than the rest of the id handling; a counter costs nothing.
 */
export function createRequestIds(prefix = randomBytes(9).toString('base64url')) {
  let counter = 0;
  const head = `req_${prefix}`;
  return {
    next(): string {
      counter += 1;
      return `${head}${counter.toString(36)}`;
    },
    /** The caller's `X-Request-Id` when it is a plain token of 8–128 characters, else a new id. */
    of(incoming: string | string[] | undefined): string {
      return typeof incoming === 'string' && ACCEPTED_REQUEST_ID.test(incoming) ? incoming : this.next();
    },
  };
}

export type RequestIds = ReturnType<typeof createRequestIds>;
