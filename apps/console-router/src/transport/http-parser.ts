/**
 * Node's own HTTP/1.1 parser (llhttp, the one `node:http` runs), for reading clients' requests in front
 * (decision 65) and agents' answers off a socket (decision 63): the router's one way of forwarding plain HTTP
 * (decision 69).
 *
 * It is reached through `_http_common`, which Node exports but does not document, so its shape is checked once
 * at start-up: on a Node release that changed it, `nodeHttpParser` throws and the router does not start (its
 * message names the Node lines the router supports). `http-parser.test.ts` checks the same shape, and the
 * order of the head callback's arguments, on every Node line the router is tested on.
 */

/** The Node release lines the router is built and tested for (the LTS lines). */
export const SUPPORTED_NODE_LINES = [20, 22] as const;

/**
 * Called with a message's head (a request's `method` index and `url`, or an answer's `statusCode`): returns 0 to
 * read the body, 1 to read none (an answer to `HEAD`), 2 to stop parsing after the head (`execute` then returns
 * the head's end as the bytes parsed).
 */
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

export interface HttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  /** Bytes parsed, or the parse error (`code` `HPE_*`); callbacks run synchronously inside. */
  execute(data: Buffer): number | Error;
  /** End of input: completes an answer delimited by the connection's close, or says it was cut. */
  finish(): Error | undefined;
  /** Frees the native parser; the object must not be used afterwards. */
  close(): void;
  [slot: number]: unknown;
}

export interface HttpParserClass {
  new (): HttpParser;
  readonly REQUEST: number;
  readonly RESPONSE: number;
  readonly kOnMessageBegin: number;
  readonly kOnHeaders: number;
  readonly kOnHeadersComplete: number;
  readonly kOnBody: number;
  readonly kOnMessageComplete: number;
  readonly kLenientNone: number;
}

const SLOTS = [
  'REQUEST',
  'RESPONSE',
  'kOnMessageBegin',
  'kOnHeaders',
  'kOnHeadersComplete',
  'kOnBody',
  'kOnMessageComplete',
  'kLenientNone',
];
const METHODS = ['initialize', 'execute', 'finish', 'close'];

/** Node's parser class when it has the shape this router was written against, else `undefined`. */
export function loadHttpParser(): HttpParserClass | undefined {
  try {
    const common = process.getBuiltinModule?.('_http_common') as { HTTPParser?: unknown } | undefined;
    const HTTPParser = common?.HTTPParser;
    if (typeof HTTPParser !== 'function') return undefined;
    const parser = HTTPParser as unknown as Record<string, unknown> & { prototype: Record<string, unknown> };
    if (!SLOTS.every((slot) => typeof parser[slot] === 'number')) return undefined;
    if (!METHODS.every((method) => typeof parser.prototype[method] === 'function')) return undefined;
    return HTTPParser as HttpParserClass;
  } catch {
    return undefined;
  }
}

/** The request method names, indexed as the parser reports a request's `method`; `undefined` if not found. */
export function loadRequestMethods(): readonly string[] | undefined {
  try {
    const common = process.getBuiltinModule?.('_http_common') as { methods?: unknown } | undefined;
    const methods = common?.methods;
    return Array.isArray(methods) && methods.includes('GET') && methods.every((m) => typeof m === 'string')
      ? (methods as string[])
      : undefined;
  } catch {
    return undefined;
  }
}

/** The parser and the method names, or an error naming the Node release and the supported lines. */
export function nodeHttpParser(): { Parser: HttpParserClass; methods: readonly string[] } {
  const Parser = loadHttpParser();
  const methods = loadRequestMethods();
  if (Parser && methods) return { Parser, methods };
  throw new Error(
    `Node ${process.version}'s HTTP parser (_http_common) is not the one this router reads requests and ` +
      `answers with; run it on Node ${SUPPORTED_NODE_LINES.join(' or ')}`,
  );
}
