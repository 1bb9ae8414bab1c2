import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { nodeFetch } from './node-fetch';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real HTTP server on a free port (or on `socketPath`), counting its connections. */
async function serve(handler: Handler, socketPath?: string) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString()));
  });
  server.on('connection', (socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) =>
    socketPath ? server.listen(socketPath, resolve) : server.listen(0, '127.0.0.1', resolve),
  );
  const url = socketPath ? 'http://localhost' : `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    connections: () => connections,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const json = (res: ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'x-seen': 'yes' });
  res.end(body);
};

describe('nodeFetch, the services’ fetch on Node’s HTTP client', () => {
  const servers: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  test('when a JSON request is sent, then the answer is a Response with its status, headers and body, and the connection is kept for the next', async () => {
    const seen: Array<{ method: string; url: string; type: string | undefined; body: string }> = [];
    const server = await serve((req, res, body) => {
      seen.push({ method: req.method!, url: req.url!, type: req.headers['content-type'], body });
      if (req.url === '/empty') {
        res.writeHead(204);
        res.end();
        return;
      }
      json(res, req.method === 'POST' ? 201 : 200, { ok: true, echo: body || null });
    });
    servers.push(server);
    const fetch = nodeFetch();

    const created = await fetch(
      new Request(`${server.url}/things?x=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer t' },
        body: JSON.stringify({ name: 'a' }),
      }),
    );
    expect(created.status).toBe(201);
    expect(created.headers.get('x-seen')).toBe('yes');
    expect(await created.json()).toEqual({ ok: true, echo: '{"name":"a"}' });
    const read = await fetch(new Request(`${server.url}/things/1`));
    expect(await read.json()).toEqual({ ok: true, echo: null });
    const empty = await fetch(new Request(`${server.url}/empty`, { method: 'DELETE' }));
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();

    expect(seen).toEqual([
      { method: 'POST', url: '/things?x=1', type: 'application/json', body: '{"name":"a"}' },
      { method: 'GET', url: '/things/1', type: undefined, body: '' },
      { method: 'DELETE', url: '/empty', type: undefined, body: '' },
    ]);
    expect(server.connections()).toBe(1);
  });

  test('when the signal aborts (a timeout), then it rejects with the signal’s reason as fetch does', async () => {
    const server = await serve(() => undefined); // never answers
    servers.push(server);
    const started = Date.now();
    const error = await nodeFetch()(
      new Request(`${server.url}/slow`, { signal: AbortSignal.timeout(200) }),
    ).catch((e: unknown) => e);
    expect((error as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(5_000);

    const aborted = new AbortController();
    aborted.abort(new Error('gone'));
    await expect(nodeFetch()(new Request(`${server.url}/x`, { signal: aborted.signal }))).rejects.toThrow(
      'gone',
    );
  });

  test('when nothing listens, then it rejects with a TypeError whose cause is the system error', async () => {
    const server = await serve(() => undefined);
    const { url } = server;
    await server.close();
    const error = (await nodeFetch()(new Request(`${url}/x`)).catch((e: unknown) => e)) as TypeError & {
      cause?: { code?: string };
    };
    expect(error).toBeInstanceOf(TypeError);
    expect(error.cause?.code).toBe('ECONNREFUSED');
  });

  test('when the other side resets a kept-alive connection before answering, then the request is sent once more on a new connection', async () => {
    const perSocket = new Map<Socket, number>();
    let resets = 0;
    const server = await serve((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      // The second request on a connection finds it closed under it (as an idle close races a reuse).
      if (n === 2) {
        resets += 1;
        req.socket.resetAndDestroy();
        return;
      }
      json(res, 200, { n });
    });
    servers.push(server);
    const fetch = nodeFetch();
    expect(await (await fetch(new Request(`${server.url}/a`))).json()).toEqual({ n: 1 });
    expect(
      await (await fetch(new Request(`${server.url}/b`, { method: 'POST', body: '{}' }))).json(),
    ).toEqual({
      n: 1,
    });
    expect(resets).toBe(1);
    expect(server.connections()).toBe(2);
  });

  test('when a Unix socket is named, then requests go over it, and its timeout gives up a request that does not answer', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-node-fetch-'));
    try {
      const socketPath = path.join(dir, 'control.sock');
      const server = await serve((req, res) => {
        if (req.url === '/slow') return;
        json(res, 200, { path: req.url });
      }, socketPath);
      servers.push(server);
      const fetch = nodeFetch({ socketPath, timeoutMs: 300 });
      expect(await (await fetch(new Request('http://localhost/status?x=1'))).json()).toEqual({
        path: '/status?x=1',
      });
      const error = (await fetch(new Request('http://localhost/slow')).catch((e: unknown) => e)) as Error;
      expect(error.name).toBe('TimeoutError');
      const missing = (await nodeFetch({ socketPath: path.join(dir, 'none.sock') })(
        new Request('http://localhost/status'),
      ).catch((e: unknown) => e)) as TypeError & { cause?: { code?: string } };
      expect(missing.cause?.code).toBe('ENOENT');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
