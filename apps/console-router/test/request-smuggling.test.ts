import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { freePort, startBuiltEntryPoint, waitUntilReady } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { ConsoleStack } from './support/stack';
import type { RegisteredAgent } from './support/stack';

/**
 * Request smuggling through the built router (`node dist/main.js`) to an agent's serve port, over raw sockets.
 * Every case is sent twice, byte for byte the same but for the route prefix: through the router to the agent,
 * and straight to a plain `node:http` server (default options), which says what node:http does with those bytes.
 * The router must refuse what node:http refuses, with the same status and nothing reaching the agent, and
 * forward what node:http accepts as node:http reads it: the same requests, in order, with the same bodies.
 */
jest.setTimeout(120_000);

const appDir = path.resolve(__dirname, '..');

/** What a server standing for an agent read: requests with their bodies, upgrades with the bytes after them. */
interface Seen {
  method: string;
  url: string;
  body: string;
  /** For an upgrade: every byte the server received after the upgrade's head (the tunnel's content). */
  tunnel?: string;
}

interface Recorder {
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/**
 * A `node:http` server with default options: it answers every request 200 with `ok`, accepts upgrades to any
 * path but `/refuse-upgrade` with a 101 and records what comes after, and records everything it read.
 */
async function startRecorder(): Promise<Recorder> {
  const seen: Seen[] = [];
  const tunnels = new Set<Duplex>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('latin1');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
    });
  });
  server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => undefined);
    tunnels.add(socket);
    socket.once('close', () => tunnels.delete(socket));
    const entry: Seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      body: '',
      tunnel: head.toString('latin1'),
    };
    seen.push(entry);
    if (req.url === '/refuse-upgrade') {
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno');
      return;
    }
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.on('data', (data: Buffer) => (entry.tunnel += data.toString('latin1')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of tunnels) socket.destroy();
      }),
  };
}

/**
 * Writes `bytes` on a new connection and collects what comes back until the server closes the connection or
 * stays quiet for `quietMs` (keep-alive answers do not close).
 */
function exchange(port: number, bytes: string, quietMs = 600): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    let quiet: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(quiet);
      clearTimeout(limit);
      socket.destroy();
      resolve({ text, closed });
    };
    const limit = setTimeout(() => finish(false), 10_000);
    const rearm = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(false), quietMs);
    };
    socket.on('data', (data) => {
      text += data.toString('latin1');
      rearm();
    });
    socket.on('close', () => finish(true));
    socket.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNRESET' || error.code === 'EPIPE' ? finish(true) : reject(error),
    );
    socket.on('connect', () => {
      socket.write(bytes, 'latin1');
      rearm();
    });
  });
}

/** The status codes of the answers on a connection, in order. */
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.[01] (\d{3})/g)].map((m) => Number(m[1]));

let s: ConsoleStack;
let router: NodeProcess;
let routerPort: number;
let agentServer: Recorder;
let nodeHttp: Recorder;
let agent: RegisteredAgent;
let authorization: string;

beforeAll(async () => {
  s = await ConsoleStack.start();
  agentServer = await startRecorder();
  nodeHttp = await startRecorder();
  agent = await s.registerAgent(s.home, 'smuggling-agent', { servePort: agentServer.port });
  authorization = `Bearer ${s.home.owner.token}`;
  routerPort = await freePort();
  router = startBuiltEntryPoint(
    appDir,
    'dist/main.js',
    { ...s.routerEnv(s.home), CONSOLE_ROUTER_PORT: String(routerPort), LOG_LEVEL: 'warn' },
    { name: 'console router', outputLimit: 20_000 },
  );
  await waitUntilReady(router, `http://127.0.0.1:${routerPort}`);
});

afterAll(async () => {
  await router?.stop('SIGKILL');
  await agentServer?.close();
  await nodeHttp?.close();
  await s?.close();
});

/**
 * The bytes of a case for a target: `{p}` is replaced by the route prefix (empty for node:http), `{auth}` by
 * the owner's `Authorization` line (sent to both, so both heads have the same shape).
 */
type Template = string;

async function both(template: Template) {
  const fill = (prefix: string) =>
    template
      .replaceAll('{p}', prefix)
      .replaceAll('{auth}', `Authorization: ${authorization}`)
      .replaceAll('{host}', 'Host: 127.0.0.1');
  agentServer.seen.length = 0;
  nodeHttp.seen.length = 0;
  const viaRouter = await exchange(routerPort, fill(`/${s.home.owner.workspace.slug}/agents/${agent.id}`));
  const direct = await exchange(nodeHttp.port, fill(''));
  return {
    router: { ...viaRouter, statuses: statuses(viaRouter.text), seen: [...agentServer.seen] },
    node: { ...direct, statuses: statuses(direct.text), seen: [...nodeHttp.seen] },
  };
}

/** The router answers as node:http does, and the agent reads exactly what node:http read. */
async function expectLikeNodeHttp(template: Template) {
  const { router: r, node } = await both(template);
  expect({ statuses: r.statuses, seen: r.seen }).toEqual({ statuses: node.statuses, seen: node.seen });
  // A refusal closes the connection on both sides.
  if (node.statuses.some((status) => status >= 400)) {
    expect(node.closed).toBe(true);
    expect(r.closed).toBe(true);
  }
  return { router: r, node };
}

const SMUGGLED = 'GET /smuggled HTTP/1.1\r\n{host}\r\n{auth}\r\n\r\n';

describe('conflicting Content-Length and Transfer-Encoding', () => {
  test('when a request has both, then the router refuses it as node:http does and nothing reaches the agent', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(r.statuses).toEqual([400]);
    expect(r.seen).toEqual([]);
  });

  test('when Transfer-Encoding comes first, or is not chunked, then likewise', async () => {
    const first = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(first.router.seen).toEqual([]);
    const notChunked = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 5\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(notChunked.router.seen.map((seen) => seen.url)).not.toContain('/smuggled');
  });

  test('when Content-Length is sent twice with different values, then likewise', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 5\r\nContent-Length: 30\r\n\r\nhello${SMUGGLED}`,
    );
    expect(r.statuses).toEqual([400]);
    expect(r.seen).toEqual([]);
  });
});

describe('obs-fold', () => {
  test('when a header is folded onto a second line, then the router refuses it as node:http does', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `GET {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nX-Note: first\r\n  folded\r\n\r\n`,
    );
    expect(r.seen).toEqual([]);
  });

  test('when Transfer-Encoding is folded to hide it, then likewise', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(r.seen.map((seen) => seen.url)).not.toContain('/smuggled');
  });
});

describe('bare LF', () => {
  test('when header lines end in LF without CR, then the router does what node:http does', async () => {
    const { router: r } = await expectLikeNodeHttp(`GET {p}/echo HTTP/1.1\n{host}\n{auth}\nX-Note: lf\n\n`);
    expect(r.seen.map((seen) => seen.url)).not.toContain('/smuggled');
  });

  test('when a chunk size line ends in a bare LF, then likewise', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(r.seen.map((seen) => seen.url)).not.toContain('/smuggled');
  });

  test('when a header value carries a bare CR, then likewise', async () => {
    await expectLikeNodeHttp(`GET {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nX-Note: a\rb\r\n\r\n`);
  });
});

describe('oversized chunk extensions', () => {
  test('when chunk extensions exceed what node:http allows, then the router refuses the body as node:http does', async () => {
    const extension = `;ext=${'x'.repeat(20_000)}`;
    const { router: r, node } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n5${extension}\r\nhello\r\n0\r\n\r\n${SMUGGLED}`,
    );
    expect(node.statuses).toEqual([413]);
    expect(r.seen).toEqual([]);
  });

  test('when chunk extensions are small, then the body is forwarded as node:http reads it', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/echo HTTP/1.1\r\n{host}\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n0\r\n\r\n`,
    );
    expect(r.seen).toEqual([{ method: 'POST', url: '/echo', body: 'hello' }]);
  });
});

describe('pipelining', () => {
  test('when well-formed requests are pipelined, then each is forwarded once, in order, with its body', async () => {
    const { router: r } = await expectLikeNodeHttp(
      `POST {p}/one HTTP/1.1\r\n{host}\r\n{auth}\r\nContent-Length: 3\r\n\r\nabc` +
        `GET {p}/two HTTP/1.1\r\n{host}\r\n{auth}\r\n\r\n` +
        `POST {p}/three HTTP/1.1\r\n{host}\r\n{auth}\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nde\r\n0\r\n\r\n`,
    );
    expect(r.statuses).toEqual([200, 200, 200]);
    expect(r.seen.map((seen) => seen.url)).toEqual(['/one', '/two', '/three']);
  });

  test('when a request follows an upgrade on the same bytes, then it reaches the agent as tunnel bytes, never as a request', async () => {
    const upgrade =
      'GET {p}/terminal HTTP/1.1\r\n{host}\r\n{auth}\r\nOrigin: http://127.0.0.1\r\nConnection: Upgrade\r\n' +
      'Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
    const { router: r, node } = await both(`${upgrade}${SMUGGLED}`);
    const smuggled = SMUGGLED.replace('{host}', 'Host: 127.0.0.1').replace(
      '{auth}',
      `Authorization: ${authorization}`,
    );
    // node:http hands the bytes after an upgrade's head to the upgrade, and reads no request from them.
    expect(node.statuses).toEqual([101]);
    expect(node.seen).toEqual([{ method: 'GET', url: '/terminal', body: '', tunnel: smuggled }]);
    expect(r.statuses).toEqual([101]);
    expect(r.seen).toEqual(node.seen);
  });

  test('when the agent refuses an upgrade followed by a request, then the refusal is relayed, the connection closes and the request is never forwarded', async () => {
    const { router: r } = await both(
      'GET {p}/refuse-upgrade HTTP/1.1\r\n{host}\r\n{auth}\r\nOrigin: http://127.0.0.1\r\nConnection: Upgrade\r\n' +
        `Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n${SMUGGLED}`,
    );
    expect(r.statuses).toEqual([400]);
    expect(r.closed).toBe(true);
    expect(r.seen.filter((seen) => seen.tunnel === undefined)).toEqual([]);
    expect(r.seen.map((seen) => seen.url)).toEqual(['/refuse-upgrade']);
  });

  test('when the router refuses an upgrade followed by a request, then the connection closes and nothing reaches the agent', async () => {
    const { router: r } = await both(
      'GET {p}/terminal HTTP/1.1\r\n{host}\r\nOrigin: http://127.0.0.1\r\nConnection: Upgrade\r\n' +
        `Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n${SMUGGLED}`,
    );
    expect(r.statuses).toEqual([401]);
    expect(r.closed).toBe(true);
    expect(r.seen).toEqual([]);
  });
});
