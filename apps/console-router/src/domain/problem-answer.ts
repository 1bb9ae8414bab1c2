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
