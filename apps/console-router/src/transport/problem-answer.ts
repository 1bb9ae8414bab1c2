import { STATUS_CODES } from 'node:http';
import { toProblem } from '@svc/service-kit/http';

/** A problem+json answer ready to be written on a response or a raw socket. */
export interface ProblemAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The failure is ours (5xx that is not an expected unavailability): log it. */
  internal: boolean;
}

export function problemAnswer(error: unknown, requestId: string): ProblemAnswer {
  const problem = toProblem(error, requestId);
  const body = JSON.stringify(problem.body);
  return {
    status: problem.status,
    body,
    internal: problem.internal,
    headers: {
      ...problem.headers,
      'Content-Type': 'application/problem+json',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Request-Id': requestId,
    },
  };
}

/** The answer as raw HTTP/1.1, for a socket that was never handed to an HTTP response (upgrades). */
export function rawHttpAnswer(answer: ProblemAnswer): string {
  const head = [
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? 'Error'}`,
    ...Object.entries({ ...answer.headers, Connection: 'close' }).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  return `${head}\r\n\r\n${answer.body}`;
}

/** What a connection whose request could not be read gets, by the error's code, as `node:http` answers it. */
const CLIENT_ERROR_STATUS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * The last answer on a connection whose request was malformed, too large or too slow (`431`, `413`, `408`, else
 * `400`), as raw HTTP/1.1 that closes the connection. Written only when no answer has begun on it.
 */
export function clientErrorAnswer(code: string | undefined): string {
  const status = (code !== undefined && CLIENT_ERROR_STATUS[code]) || '400 Bad Request';
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`;
}
