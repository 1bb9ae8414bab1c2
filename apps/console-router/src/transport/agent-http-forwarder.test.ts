import http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { eventually, sleep } from '@svc/testing';
import { AgentHttpForwarder } from './agent-http-forwarder';
import type { ForwardTarget } from './agent-http-forwarder';
import { loadHttpParser } from './http-parser';

/**
 * The router's HTTP leg against real sockets: a front `node:http` server forwards every request through the
 * forwarder to an upstream that is either a `node:http` server or a raw TCP server answering bytes by hand.
 */
jest.setTimeout(30_000);

const Parser = loadHttpParser();

interface Front {
  url: string;
  forwarder: AgentHttpForwarder;
  answers: number[];
  failures: string[];
  close(): Promise<void>;
}

const listening = (server: net.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );

async function front(upstreamPort: number, idleMs = 4_000): Promise<Front> {
  const answers: number[] = [];
  const failures: string[] = [];
  const forwarder = new AgentHttpForwarder({
    Parser: Parser!,
    idleMs,
    onAnswer: (status) => answers.push(status),
    onFailed: (error, _req, res) => {
      failures.push(error.code ?? 'unknown');
      if (res.headersSent || res.destroyed) res.destroy();
      else
        res
          .writeHead(503, { 'Content-Type': 'application/problem+json' })
          .end('{"code":"agent_unavailable"}');
    },
  });
  const server = http.createServer((req, res) => {
    const target: ForwardTarget = {
      agentId: 'agt_a',
      servePort: upstreamPort,
      path: req.url!.replace(/^\/w\/agents\/agt_a/, '') || '/',
      caller: 'participant:prt_1',
      proxyKey: 'key-1',
      requestId: 'req_test_1',
    };
    forwarder.forward(req, res, target);
  });
  const port = await listening(server);
  return {
    url: `http://127.0.0.1:${port}/w/agents/agt_a`,
    forwarder,
    answers,
    failures,
    close: async () => {
      forwarder.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function upstreamHttp(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = http.createServer(handler);
  const port = await listening(server);
  return {
    port,
    server,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A TCP server answering each connection's requests by hand: `answer(request text, socket, index)`. */
async function upstreamRaw(answer: (head: string, socket: net.Socket, index: number) => void) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let buffered = '';
    let index = 0;
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      let end = buffered.indexOf('\r\n\r\n');
      while (end !== -1) {
        const head = buffered.slice(0, end);
        buffered = buffered.slice(end + 4);
        answer(head, socket, index);
        index += 1;
        end = buffered.indexOf('\r\n\r\n');
      }
    });
  });
  const port = await listening(server);
  return {
    port,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A request through `node:http` (which, unlike `fetch`, may send a `Connection` header). */
function get(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      http
        .get(url, { headers, agent: false }, (res) => {
          let body = '';
          res.setEncoding('latin1');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        })
        .on('error', reject);
    },
  );
}

describe('AgentHttpForwarder', () => {
  it('relays an answer with its headers, without hop-by-hop headers or hub credentials', async () => {
    let seen: IncomingMessage | undefined;
    const up = await upstreamHttp((req, res) => {
      seen = req;
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.setHeader('X-Agent', 'yes');
      res.setHeader('Connection', 'keep-alive, x-hop');
      res.setHeader('X-Hop', 'dropped');
      res.end('hello');
    });
    const f = await front(up.port);
    try {
      const response = await get(`${f.url}/global/health?x=1`, {
        Authorization: 'Bearer secret-token',
        Cookie: 'session=secret',
        'Proxy-Authorization': 'Basic c2VjcmV0',
        'X-Svc-Console-Caller': 'forged',
        'X-Keep': 'kept',
        Connection: 'x-nominated',
        'X-Nominated': 'dropped',
      });
      expect(response.status).toBe(200);
      expect(response.body).toBe('hello');
      expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
      expect(response.headers['x-agent']).toBe('yes');
      expect(response.headers['x-hop']).toBeUndefined();
      expect(response.headers['x-request-id']).toBe('req_test_1');
      expect(seen?.url).toBe('/global/health?x=1');
      expect(seen?.headers.host).toBe(`127.0.0.1:${up.port}`);
      expect(seen?.headers.authorization).toBeUndefined();
      expect(seen?.headers.cookie).toBeUndefined();
      expect(seen?.headers['proxy-authorization']).toBeUndefined();
      expect(seen?.headers['x-nominated']).toBeUndefined();
      expect(seen?.headers['x-keep']).toBe('kept');
      expect(seen?.headers['x-svc-console-caller']).toBe('participant:prt_1');
      expect(seen?.headers['x-svc-console-proxy-key']).toBe('key-1');
      expect(seen?.headers['x-request-id']).toBe('req_test_1');
      expect(f.answers).toEqual([200]);
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('streams large bodies both ways byte for byte, with a length or chunked, reusing one connection', async () => {
    const up = await upstreamHttp((req, res) => {
      res.setHeader(
        'X-Framing',
        req.headers['transfer-encoding'] ?? `length ${req.headers['content-length']}`,
      );
      req.pipe(res);
    });
    const f = await front(up.port);
    try {
      const body = Buffer.alloc(3 * 1024 * 1024);
      for (let i = 0; i < body.length; i += 1) body[i] = (i * 31) % 251;
      const sized = await fetch(`${f.url}/echo`, { method: 'POST', body });
      expect(sized.headers.get('x-framing')).toBe(`length ${body.length}`);
      expect(Buffer.from(await sized.arrayBuffer()).equals(body)).toBe(true);
      const stream = new ReadableStream({
        start(controller) {
          for (let at = 0; at < body.length; at += 100_000)
            controller.enqueue(body.subarray(at, at + 100_000));
          controller.close();
        },
      });
      const chunked = await fetch(`${f.url}/echo`, {
        method: 'POST',
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(chunked.headers.get('x-framing')).toBe('chunked');
      expect(Buffer.from(await chunked.arrayBuffer()).equals(body)).toBe(true);
      expect(f.forwarder.connections).toBe(1);
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('answers HEAD, 204 and 304 without a body and keeps the connection', async () => {
    const up = await upstreamHttp((req, res) => {
      if (req.url === '/none') res.writeHead(204).end();
      else if (req.url === '/same') res.writeHead(304, { ETag: '"v1"' }).end();
      else res.writeHead(200, { 'Content-Length': '5' }).end(req.method === 'HEAD' ? undefined : 'hello');
    });
    const f = await front(up.port);
    try {
      const head = await fetch(`${f.url}/x`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe('5');
      expect((await fetch(`${f.url}/none`)).status).toBe(204);
      const same = await fetch(`${f.url}/same`);
      expect(same.status).toBe(304);
      expect(same.headers.get('etag')).toBe('"v1"');
      expect(await (await fetch(`${f.url}/x`)).text()).toBe('hello');
      expect(f.forwarder.connections).toBe(1);
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('passes a streamed answer on as it comes (server-sent events)', async () => {
    let release: () => void = () => undefined;
    const up = await upstreamHttp((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write('data: first\n\n');
      release = () => res.end('data: last\n\n');
    });
    const f = await front(up.port);
    try {
      const response = await fetch(`${f.url}/chat/stream`);
      const reader = response.body!.getReader();
      const first = await reader.read();
      expect(Buffer.from(first.value!).toString()).toBe('data: first\n\n');
      release();
      let rest = '';
      for (let part = await reader.read(); !part.done; part = await reader.read()) {
        rest += Buffer.from(part.value).toString();
      }
      expect(rest).toBe('data: last\n\n');
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('relays an answer delimited by the close of the connection, and skips 1xx answers', async () => {
    const up = await upstreamRaw((head, socket) => {
      if (head.startsWith('GET /informational')) {
        socket.write('HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n');
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
        return;
      }
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end');
    });
    const f = await front(up.port);
    try {
      expect(await (await fetch(`${f.url}/close-delimited`)).text()).toBe('until the end');
      expect(await (await fetch(`${f.url}/informational`)).text()).toBe('ok');
      expect(f.answers).toEqual([200, 200]);
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('answers JSON when the agent is not listening, and when its answer is not HTTP', async () => {
    const garbage = await upstreamRaw((_head, socket) => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    const broken = await front(garbage.port);
    try {
      const response = await fetch(`${broken.url}/x`);
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ code: 'agent_unavailable' });
      expect(broken.failures).toEqual(['EPROTO']);
      await eventually(() => broken.forwarder.connections === 0, 5_000, 'the broken connection dropped', {
        intervalMs: 20,
      });
      // A port nobody listens on.
      const unused = net.createServer();
      const port = await listening(unused);
      await new Promise((resolve) => unused.close(resolve));
      const nobody = await front(port);
      const refusedAnswer = await fetch(`${nobody.url}/x`);
      expect(refusedAnswer.status).toBe(503);
      expect(nobody.failures).toEqual(['ECONNREFUSED']);
      await nobody.close();
    } finally {
      await broken.close();
      await garbage.close();
    }
  });

  it('retries once on a new connection when the agent closed a pooled one, and never reuses a doubtful one', async () => {
    // The agent answers the first request of each connection and drops the second unanswered (the race of a
    // keep-alive connection closed by the agent as the router reuses it).
    const up = await upstreamRaw((_head, socket, index) => {
      if (index === 0) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      else socket.destroy();
    });
    const f = await front(up.port);
    try {
      expect(await (await fetch(`${f.url}/one`)).text()).toBe('ok');
      expect(await (await fetch(`${f.url}/two`)).text()).toBe('ok');
      expect(up.connections()).toBe(2);
      expect(f.failures).toEqual([]);
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('cuts the client when the agent dies mid-answer, and the agent when the client leaves', async () => {
    let sockets = 0;
    const up = await upstreamRaw((head, socket) => {
      sockets += 1;
      if (head.startsWith('GET /cut')) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial');
      if (head.startsWith('GET /cut')) setTimeout(() => socket.destroy(), 50);
      // `/hang` never answers.
    });
    const f = await front(up.port);
    try {
      const cut = await fetch(`${f.url}/cut`);
      await expect(cut.text()).rejects.toThrow();
      const leaving = new AbortController();
      const hanging = fetch(`${f.url}/hang`, { signal: leaving.signal }).catch(() => 'aborted');
      await eventually(() => sockets === 2, 5_000, 'two agent connections', { intervalMs: 20 });
      leaving.abort();
      expect(await hanging).toBe('aborted');
      await eventually(() => f.forwarder.connections === 0, 5_000, 'every agent connection closed', {
        intervalMs: 20,
      });
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('does not reuse a connection whose answer came before the request body was sent in full', async () => {
    const up = await upstreamHttp((req, res) => {
      if (req.url === '/too-large') {
        res.writeHead(413, { Connection: 'keep-alive' }).end('too large');
        return;
      }
      req.resume();
      req.on('end', () => res.end('ok'));
    });
    const f = await front(up.port);
    try {
      const body = new ReadableStream({
        async pull(controller) {
          await sleep(20);
          controller.enqueue(new Uint8Array(1024));
        },
      });
      const early = await fetch(`${f.url}/too-large`, {
        method: 'POST',
        body,
        duplex: 'half',
      } as RequestInit);
      expect(early.status).toBe(413);
      expect(await early.text()).toBe('too large');
      await eventually(() => f.forwarder.connections === 0, 5_000, 'every agent connection closed', {
        intervalMs: 20,
      });
      expect(await (await fetch(`${f.url}/after`, { method: 'POST', body: 'x' })).text()).toBe('ok');
    } finally {
      await f.close();
      await up.close();
    }
  });

  it('answers pipelined requests in order, each on a connection of its own while the others are busy', async () => {
    const up = await upstreamHttp((req, res) => {
      // The first answer is the slowest: order must come from the client's side, not from the agents'.
      const delay = req.url === '/slow' ? 100 : 0;
      setTimeout(() => res.end(`answer for ${req.url}`), delay);
    });
    const f = await front(up.port);
    const client = net.connect(Number(new URL(f.url).port), '127.0.0.1');
    try {
      const path = new URL(f.url).pathname;
      const ask = (rest: string) => `GET ${path}${rest} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      let text = '';
      client.on('data', (data) => (text += data.toString('latin1')));
      client.write(ask('/slow') + ask('/fast') + ask('/last'));
      await eventually(() => (text.match(/answer for/g) ?? []).length === 3, 5_000, 'three answers', {
        intervalMs: 20,
      });
      const order = [...text.matchAll(/answer for (\/(?:slow|fast|last))/g)].map((match) => match[1]);
      expect(order).toEqual(['/slow', '/fast', '/last']);
    } finally {
      client.destroy();
      await f.close();
      await up.close();
    }
  });

  it('closes idle connections after the idle limit', async () => {
    const up = await upstreamHttp((_req, res) => res.end('ok'));
    const f = await front(up.port, 300);
    try {
      await Promise.all([1, 2, 3].map(() => fetch(`${f.url}/x`).then((r) => r.text())));
      expect(f.forwarder.connections).toBeGreaterThan(0);
      await eventually(() => f.forwarder.connections === 0, 5_000, 'every agent connection closed', {
        intervalMs: 20,
      });
    } finally {
      await f.close();
      await up.close();
    }
  });
});
