import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a stub answers to one path: a status and a JSON body. */
export interface StubAnswer {
  status: number;
  body: string;
}

export interface StubServer {
  url: string;
  /** When true, requests are never answered (a service that hangs). */
  hang: boolean;
  /** Paths requested so far. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A local stand-in for another service on 127.0.0.1: every request is recorded; `answer(path)` says what to
 * reply (read at request time, so a test can change it between requests), `undefined` means 404.
 */
export async function startStubServer(answer: (path: string) => StubAnswer | undefined): Promise<StubServer> {
  const server = createServer((req, res) => {
    stub.requests.push(req.url ?? '');
    if (stub.hang) return;
    const reply = answer(req.url ?? '');
    if (reply) res.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stub: StubServer = {
    url: `http://127.0.0.1:${port}`,
    hang: false,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return stub;
}
