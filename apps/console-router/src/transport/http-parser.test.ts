import { loadHttpParser, loadRequestMethods, nodeHttpParser } from './http-parser';
import type { HttpParserClass } from './http-parser';

/**
 * The router reads requests and agents' answers with Node's own parser, which Node exports from `_http_common`
 * without documenting it (decisions 63, 65 and 69). These tests hold this Node release to the exact shape the
 * router uses: the exports, the slots and constants, the methods, the arguments of each callback in their order,
 * what a callback's return value does and how an error comes back. A Node release that changes any of it fails
 * here, by name, before a router runs on it (`pnpm --filter @svc/console-router run test:node22` runs this
 * suite on Node 22).
 */

type Calls = { name: string; args: unknown[] }[];

function parser(Parser: HttpParserClass, type: number, calls: Calls, onHead?: number) {
  const p = new Parser();
  p.initialize(type, {}, 0, Parser.kLenientNone);
  p[Parser.kOnMessageBegin] = (...args: unknown[]) => calls.push({ name: 'begin', args });
  p[Parser.kOnHeaders] = (...args: unknown[]) => calls.push({ name: 'headers', args });
  p[Parser.kOnHeadersComplete] = (...args: unknown[]) => {
    calls.push({ name: 'head', args });
    return onHead ?? 0;
  };
  p[Parser.kOnBody] = (...args: unknown[]) =>
    calls.push({ name: 'body', args: args.map((a) => (Buffer.isBuffer(a) ? a.toString('latin1') : a)) });
  p[Parser.kOnMessageComplete] = (...args: unknown[]) => calls.push({ name: 'complete', args });
  return p;
}

describe(`Node's HTTP parser on ${process.version}`, () => {
  test('when _http_common is read, then it exports HTTPParser and the method names the router uses', () => {
    const common = process.getBuiltinModule('_http_common') as Record<string, unknown>;
    expect(typeof common.HTTPParser).toBe('function');
    expect(common.methods).toEqual(
      expect.arrayContaining(['DELETE', 'GET', 'HEAD', 'POST', 'PUT', 'OPTIONS']),
    );
    expect(loadHttpParser()).toBe(common.HTTPParser);
    expect(loadRequestMethods()).toBe(common.methods);
    expect(nodeHttpParser()).toEqual({ Parser: common.HTTPParser, methods: common.methods });
  });

  test('when its slots and constants are read, then each is where the router expects it', () => {
    const Parser = loadHttpParser()!;
    expect({
      REQUEST: Parser.REQUEST,
      RESPONSE: Parser.RESPONSE,
      kOnMessageBegin: Parser.kOnMessageBegin,
      kOnHeaders: Parser.kOnHeaders,
      kOnHeadersComplete: Parser.kOnHeadersComplete,
      kOnBody: Parser.kOnBody,
      kOnMessageComplete: Parser.kOnMessageComplete,
      kLenientNone: Parser.kLenientNone,
    }).toEqual({
      REQUEST: 1,
      RESPONSE: 2,
      kOnMessageBegin: 0,
      kOnHeaders: 1,
      kOnHeadersComplete: 2,
      kOnBody: 3,
      kOnMessageComplete: 4,
      kLenientNone: 0,
    });
    for (const method of ['initialize', 'execute', 'finish', 'close'])
      expect(typeof (Parser.prototype as unknown as Record<string, unknown>)[method]).toBe('function');
  });

  test('when a request is parsed, then the head callback gets version, headers, method index and URL in that order, and the body one Buffer', () => {
    const Parser = loadHttpParser()!;
    const methods = loadRequestMethods()!;
    const calls: Calls = [];
    const p = parser(Parser, Parser.REQUEST, calls);
    const bytes = 'POST /a?b=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc';
    expect(p.execute(Buffer.from(bytes))).toBe(bytes.length);
    const head = calls.find((c) => c.name === 'head')!.args;
    expect(head.slice(0, 9)).toEqual([
      1,
      1,
      ['Host', 'x', 'Content-Length', '3'],
      expect.any(Number),
      '/a?b=1',
      undefined,
      undefined,
      false,
      true,
    ]);
    expect(methods[head[3] as number]).toBe('POST');
    expect(calls.filter((c) => c.name === 'body')).toEqual([{ name: 'body', args: ['abc'] }]);
    expect(calls.at(-1)!.name).toBe('complete');
    p.close();
  });

  test('when an answer is parsed, then the head callback gets the status code and message; 1 skips the body', () => {
    const Parser = loadHttpParser()!;
    const calls: Calls = [];
    const p = parser(Parser, Parser.RESPONSE, calls, 1);
    const bytes = 'HTTP/1.1 200 Fine\r\nContent-Length: 5\r\nConnection: close\r\n\r\n';
    expect(p.execute(Buffer.from(bytes))).toBe(bytes.length);
    const head = calls.find((c) => c.name === 'head')!.args;
    expect(head.slice(0, 9)).toEqual([
      1,
      1,
      ['Content-Length', '5', 'Connection', 'close'],
      undefined,
      undefined,
      200,
      'Fine',
      false,
      false,
    ]);
    // 1 from the head callback: no body expected (an answer to HEAD); the message is complete at once.
    expect(calls.map((c) => c.name)).toEqual(['begin', 'head', 'complete']);
    expect(p.finish()).toBeUndefined();
    p.close();
  });

  test('when the head callback returns 2, then parsing stops at the end of the head (pipelined requests wait)', () => {
    const Parser = loadHttpParser()!;
    const calls: Calls = [];
    const p = parser(Parser, Parser.REQUEST, calls, 2);
    const head = 'GET /first HTTP/1.1\r\nHost: x\r\n\r\n';
    expect(p.execute(Buffer.from(`${head}GET /second HTTP/1.1\r\nHost: x\r\n\r\n`))).toBe(head.length);
    expect(calls.filter((c) => c.name === 'head')).toHaveLength(1);
    p.close();
  });

  test('when a request is malformed, then execute returns an error with its HPE_ code and no exception', () => {
    const Parser = loadHttpParser()!;
    const p = parser(Parser, Parser.REQUEST, []);
    const error = p.execute(
      Buffer.from('POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n'),
    );
    expect(typeof error).toBe('object');
    expect((error as NodeJS.ErrnoException).code).toMatch(/^HPE_/);
    p.close();
  });

  test('when an answer is delimited by the close of the connection, then finish completes it', () => {
    const Parser = loadHttpParser()!;
    const calls: Calls = [];
    const p = parser(Parser, Parser.RESPONSE, calls);
    p.execute(Buffer.from('HTTP/1.1 200 OK\r\n\r\nuntil close'));
    expect(calls.map((c) => c.name)).toEqual(['begin', 'head', 'body']);
    expect(p.finish()).toBeUndefined();
    expect(calls.at(-1)!.name).toBe('complete');
    p.close();
  });
});
