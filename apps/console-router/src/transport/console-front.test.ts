import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { eventually, sleep } from '@svc/testing';
import { parseAgentPath } from '../domain/route-table';
import { ConsoleFront } from './console-front';
import type { FrontRequest, FrontResponse } from './front-exchange';
import { loadHttpParser, loadRequestMethods } from './http-parser';

/**
 * The front on a real listening `http.Server`, over real sockets: agent routes (`/w/agents/…`) are answered by
 * the test's handler through the front, everything else by the server's own `request` and `upgrade` listeners.
 */
type Handler = (req: FrontRequest, res: FrontResponse) => void;

interface Setup {
  port: number;
  server: http.Server;
  front: ConsoleFront;
  failures: unknown[];
  setHandler(handler: Handler): void;
  close(): Promise<void>;
}

async function setup(configure: (server: http.Server) => void = () => undefined): Promise<Setup> {
  let handler: Handler = (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': String(req.url.length) });
    res.end(req.url);
  };
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`node:${req.url}`);
  });
  server.on('upgrade', (req, socket, head) => {
    socket.end(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\nup:${req.url}:${head}`,
    );
  });
  configure(server);
  const failures: unknown[] = [];
  const front = new ConsoleFront({
    Parser: loadHttpParser()!,
    methods: loadRequestMethods()!,
    route: parseAgentPath,
    handle: (req, res) => handler(req, res),
    failed: (error) => failures.push(error),
  });
  front.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    front,
    failures,
    setHandler: (next) => {
      handler = next;
    },
    close: async () => {
      front.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A raw client: writes what it is given and collects every byte until the server closes (or `until` matches). */
function rawExchange(
  port: number,
  writes: (string | Buffer)[],
  options: { until?: (text: string) => boolean; endAfterWrites?: boolean; gapMs?: number } = {},
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(limit);
      socket.destroy();
      resolve({ text, closed });
    };
    const limit = setTimeout(() => finish(false), 8_000);
    socket.on('data', (data) => {
      text += data.toString('latin1');
      if (options.until?.(text)) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const write of writes) {
        socket.write(write);
        if (options.gapMs) await sleep(options.gapMs);
      }
      if (options.endAfterWrites) socket.end();
    });
  });
}

const count = (text: string, part: string) => text.split(part).length - 1;

let s: Setup;
beforeEach(async () => {
  s = await setup();
});
afterEach(async () => {
  await s.close();
});

describe('requests to agent routes', () => {
  test('when two requests come one after the other on a connection, then both are answered there, kept alive', async () => {
    const { text, closed } = await rawExchange(
      s.port,
      ['GET /w/agents/a/one HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /w/agents/a/two HTTP/1.1\r\nHost: x\r\n\r\n'],
      { gapMs: 50, until: (t) => t.includes('/w/agents/a/two') },
    );
    expect(closed).toBe(false);
    expect(count(text, 'HTTP/1.1 200 OK')).toBe(2);
    expect(text).toMatch(/Connection: keep-alive\r\nKeep-Alive: timeout=\d+\r\n/);
    expect(text).toMatch(/Date: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} /);
    expect(text.indexOf('/w/agents/a/one')).toBeLessThan(text.indexOf('/w/agents/a/two'));
  });

  test('when requests are pipelined and answered late, then the answers keep the requests order', async () => {
    s.setHandler((req, res) => {
      const delay = req.url.endsWith('slow') ? 80 : 0;
      setTimeout(() => res.writeHead(200, { 'Content-Length': String(req.url.length) }).end(req.url), delay);
    });
    const pipelined =
      'GET /w/agents/a/slow HTTP/1.1\r\nHost: x\r\n\r\n' +
      'POST /w/agents/a/body HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello' +
      'GET /w/agents/a/last HTTP/1.1\r\nHost: x\r\n\r\n';
    const { text } = await rawExchange(s.port, [pipelined], { until: (t) => t.endsWith('/w/agents/a/last') });
    const order = ['/w/agents/a/slow', '/w/agents/a/body', '/w/agents/a/last'].map((p) => text.indexOf(p));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  test('when a body comes with Content-Length or chunked, then the handler reads it whole, also when it listens late', async () => {
    s.setHandler((req, res) => {
      const read = () => {
        const parts: Buffer[] = [];
        req.on('data', (chunk: Buffer) => parts.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(parts).toString();
          res.writeHead(200, { 'Content-Length': String(body.length) }).end(body);
        });
      };
      if (req.url.endsWith('late')) setTimeout(read, 50);
      else read();
    });
    const big = 'b'.repeat(200_000);
    const { text } = await rawExchange(
      s.port,
      [
        `POST /w/agents/a/now HTTP/1.1\r\nHost: x\r\nContent-Length: ${big.length}\r\n\r\n${big}`,
        'POST /w/agents/a/late HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n',
      ],
      { gapMs: 20, until: (t) => t.endsWith('abcdefg') },
    );
    expect(text).toContain(`Content-Length: ${big.length}\r\n`);
    expect(text).toContain(big);
    expect(text).toContain('Content-Length: 7\r\n');
    expect(text.endsWith('\r\n\r\nabcdefg')).toBe(true);
  });

  test('when an answer has no length, then it is chunked; a HEAD answer has no body; a 204 neither', async () => {
    s.setHandler((req, res) => {
      if (req.method === 'HEAD') res.writeHead(200, { 'Content-Length': '42' }).end();
      else if (req.url.endsWith('empty')) res.writeHead(204).end();
      else {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('part one, ');
        res.end('part two');
      }
    });
    const { text } = await rawExchange(
      s.port,
      [
        'GET /w/agents/a/stream HTTP/1.1\r\nHost: x\r\n\r\n',
        'HEAD /w/agents/a/head HTTP/1.1\r\nHost: x\r\n\r\n',
        'GET /w/agents/a/empty HTTP/1.1\r\nHost: x\r\n\r\n',
      ],
      { gapMs: 30, until: (t) => t.includes('204 No Content') && t.endsWith('\r\n\r\n') },
    );
    expect(text).toContain('Transfer-Encoding: chunked\r\n');
    expect(text).toContain('a\r\npart one, \r\n8\r\npart two\r\n0\r\n\r\n');
    const head = text.slice(text.indexOf('Content-Length: 42'));
    expect(head.split('\r\n\r\n')[1]).toMatch(/^HTTP\/1.1 204/);
  });

  test('when the client asks to close, or half-closes after an answered request, then the connection ends', async () => {
    const asked = await rawExchange(s.port, [
      'GET /w/agents/a/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    ]);
    expect(asked.closed).toBe(true);
    expect(asked.text).toContain('Connection: close\r\n');
    expect(asked.text.endsWith('/w/agents/a/x')).toBe(true);
    const halfClosed = await rawExchange(s.port, ['GET /w/agents/a/y HTTP/1.1\r\nHost: x\r\n\r\n'], {
      endAfterWrites: true,
    });
    expect(halfClosed.closed).toBe(true);
    expect(halfClosed.text.endsWith('/w/agents/a/y')).toBe(true);
  });

  test('when the client goes away (or half-closes) before the answer, then the answer hears close', async () => {
    let closedHeard: () => void = () => undefined;
    const heard = new Promise<void>((resolve) => (closedHeard = resolve));
    s.setHandler((_req, res) => {
      res.once('close', () => {
        if (!res.writableFinished) closedHeard();
      });
    });
    const socket = net.connect(s.port, '127.0.0.1');
    socket.write('GET /w/agents/a/wait HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(50);
    socket.end();
    await heard;
    await eventually(() => s.front.size === 0, 5_000, 'the front to forget its connections');
  });

  test('when the handler throws, then that connection closes, the failure is reported and the next one is served', async () => {
    s.setHandler((req, res) => {
      if (req.url.endsWith('boom')) throw new Error('boom');
      res.writeHead(200, { 'Content-Length': '2' }).end('ok');
    });
    const failed = await rawExchange(s.port, ['GET /w/agents/a/boom HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(failed).toEqual({ text: '', closed: true });
    expect(String(s.failures[0])).toContain('boom');
    const ok = await rawExchange(s.port, ['GET /w/agents/a/fine HTTP/1.1\r\nHost: x\r\n\r\n'], {
      until: (t) => t.endsWith('ok'),
    });
    expect(ok.text).toMatch(/^HTTP\/1.1 200 OK/);
  });
});

describe('what the front does not answer itself', () => {
  test('when a request is not to an agent route, then node:http answers it on the same connection, after the agent answer before it', async () => {
    const { text } = await rawExchange(
      s.port,
      ['GET /w/agents/a/first HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
      { until: (t) => t.includes('node:/healthz') },
    );
    expect(text.indexOf('/w/agents/a/first')).toBeLessThan(text.indexOf('node:/healthz'));
    // node:http keeps serving the connection, agent routes included.
    const more = await rawExchange(
      s.port,
      ['GET /status HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /w/agents/a/after HTTP/1.1\r\nHost: x\r\n\r\n'],
      { gapMs: 30, until: (t) => t.includes('node:/w/agents/a/after') },
    );
    expect(more.text).toContain('node:/status');
  });

  test('when a request is an upgrade, HTTP/1.0, or repeats a header, then node:http gets it with every byte', async () => {
    const upgrade = await rawExchange(s.port, [
      'GET /w/agents/a/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\nearly-bytes',
    ]);
    expect(upgrade.text).toContain('101 Switching Protocols');
    expect(upgrade.text).toContain('up:/w/agents/a/ws:early-bytes');
    const old = await rawExchange(s.port, ['GET /w/agents/a/old HTTP/1.0\r\nHost: x\r\n\r\n']);
    expect(old.text).toContain('node:/w/agents/a/old');
    const twice = await rawExchange(s.port, [
      'GET /w/agents/a/two-hosts HTTP/1.1\r\nHost: x\r\nHost: y\r\nConnection: close\r\n\r\n',
    ]);
    expect(twice.text).toMatch(/node:\/w\/agents\/a\/two-hosts|400 Bad Request/);
  });

  test('when a request is malformed or its head too big, then 400 or 431 and the connection closes', async () => {
    const bad = await rawExchange(s.port, [
      'GET /w/agents/a/x HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n',
    ]);
    expect(bad.text).toMatch(/^HTTP\/1.1 400 Bad Request\r\n/);
    expect(bad.closed).toBe(true);
    const big = await rawExchange(s.port, [
      `GET /w/agents/a/x HTTP/1.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]);
    expect(big.text).toMatch(/^HTTP\/1.1 431 /);
    expect(big.closed).toBe(true);
    expect(s.failures).toEqual([]);
  });
});

describe('timeouts', () => {
  test('when a head is sent too slowly, or a connection idles, then the front closes it', async () => {
    await s.close();
    s = await setup((server) => {
      server.headersTimeout = 1_000;
      server.keepAliveTimeout = 1_000;
    });
    const started = Date.now();
    const slow = await rawExchange(s.port, ['GET /w/agents/a/x HTTP/1.1\r\nHo']);
    expect(slow.closed).toBe(true);
    expect(slow.text).toBe('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
    expect(Date.now() - started).toBeLessThan(5_000);
    const idle = await rawExchange(s.port, ['GET /w/agents/a/x HTTP/1.1\r\nHost: x\r\n\r\n']);
    expect(idle.closed).toBe(true);
    expect(idle.text).toMatch(/^HTTP\/1.1 200 OK/);
    expect(idle.text).toContain('Keep-Alive: timeout=1\r\n');
    await eventually(() => s.front.size === 0, 5_000, 'the front to forget its connections');
  });

  test('when a request body comes too slowly, then 408 and the exchange is abandoned', async () => {
    await s.close();
    s = await setup((server) => {
      server.requestTimeout = 1_000;
    });
    let abandoned = false;
    s.setHandler((_req, res) => res.on('close', () => (abandoned = true)));
    const slow = await rawExchange(s.port, [
      'POST /w/agents/a/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab',
    ]);
    expect(slow.closed).toBe(true);
    expect(slow.text).toMatch(/^HTTP\/1.1 408 Request Timeout\r\n/);
    expect(abandoned).toBe(true);
    expect(s.failures).toEqual([]);
  });

  test('when the server has no idle timeout (0), then answers announce none and idle connections stay open', async () => {
    await s.close();
    s = await setup((server) => {
      server.keepAliveTimeout = 0;
    });
    const socket = net.connect(s.port, '127.0.0.1');
    let text = '';
    let closed = false;
    socket.on('data', (data) => (text += data.toString('latin1')));
    socket.on('close', () => (closed = true));
    socket.write('GET /w/agents/a/x HTTP/1.1\r\nHost: x\r\n\r\n');
    await eventually(() => text.endsWith('/w/agents/a/x'), 5_000, 'the answer');
    expect(text).toContain('Connection: keep-alive\r\n\r\n');
    expect(text).not.toContain('Keep-Alive:');
    // Two sweeps later the idle connection is still open.
    await sleep(2_200);
    expect(closed).toBe(false);
    expect(s.front.size).toBe(1);
    socket.destroy();
  });
});
