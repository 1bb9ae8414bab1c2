/**
 * Node's own HTTP/1.1 parser (llhttp, the one `node:http` runs), for reading agents' answers off a socket.
 *
 * It is reached through `_http_common`, which Node exports but does not document, so its shape is checked once
 * at start-up: when a Node release changes it, `loadResponseParser` returns `undefined` and the router forwards
 * HTTP through http-proxy-3 instead (see `upstream-proxy.ts`).
 */

/** Called with the answer's head; returns 1 to read no body (an answer to `HEAD`), 0 otherwise. */
export type OnHeadersComplete = (
  versionMajor: number,
  versionMinor: number,
  headers: string[] | undefined,
  method: number | undefined,
  url: string | undefined,
  statusCode: number,
  statusMessage: string,
  upgrade: boolean,
  shouldKeepAlive: boolean,
) => number;

export interface ResponseParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  /** Bytes parsed, or the parse error (`code` `HPE_*`); callbacks run synchronously inside. */
  execute(data: Buffer): number | Error;
  /** End of input: completes an answer delimited by the connection's close, or says it was cut. */
  finish(): Error | undefined;
  /** Frees the native parser; the object must not be used afterwards. */
  close(): void;
  [slot: number]: unknown;
}

export interface ResponseParserClass {
  new (): ResponseParser;
  readonly RESPONSE: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kLenientNone: number;
}

const SLOTS = [
  'RESPONSE',
  'kOnHeaders',
  'kOnHeadersComplete',
  'kOnBody',
  'kOnMessageComplete',
  'kLenientNone',
];
const METHODS = ['initialize', 'execute', 'finish', 'close'];

/** Node's parser class when it has the shape this router was written against, else `undefined`. */
export function loadResponseParser(): ResponseParserClass | undefined {
  try {
    const common = process.getBuiltinModule?.('_http_common') as { HTTPParser?: unknown } | undefined;
    const HTTPParser = common?.HTTPParser;
    if (typeof HTTPParser !== 'function') return undefined;
    const parser = HTTPParser as unknown as Record<string, unknown> & { prototype: Record<string, unknown> };
    if (!SLOTS.every((slot) => typeof parser[slot] === 'number')) return undefined;
    if (!METHODS.every((method) => typeof parser.prototype[method] === 'function')) return undefined;
    return HTTPParser as ResponseParserClass;
  } catch {
    return undefined;
  }
}
