import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/**
 * What the agent routes read of a client's request: a `node:http` `IncomingMessage`, or a request the router's
 * own reader took (`FrontRequest`, decision 65). The body arrives as `data` events and ends with `end`.
 */
export interface ClientRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: string[];
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeListener(event: 'data', listener: (chunk: Buffer) => void): unknown;
  removeListener(event: 'end', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/**
 * What the agent routes write to a client: a `node:http` `ServerResponse`, or the router's own (`FrontResponse`).
 * `close` comes when the answer is complete or the client went away; `drain` when a full socket can take more.
 */
export interface ClientResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  readonly writableFinished: boolean;
  readonly destroyed: boolean;
  setHeader(name: string, value: string | number | readonly string[]): unknown;
  writeHead(status: number, headers?: OutgoingHttpHeaders | string[]): this;
  write(chunk: Buffer | string): boolean;
  end(chunk?: Buffer | string): unknown;
  destroy(): unknown;
  once(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
  removeListener(event: 'close' | 'drain' | 'finish', listener: () => void): unknown;
}
