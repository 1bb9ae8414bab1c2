import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHub {
  url: string;
  /** Status `/healthz` answers with. */
  healthStatus: number;
  /** When true, requests are never answered (a hub that hangs). */
  hang: boolean;
  /** Paths requested so far. */
  requests: string[];
  close(): Promise<void>;
}

/** A local stand-in for the hub: answers `/healthz` on 127.0.0.1, 404 elsewhere. */
export async function startFakeHub(): Promise<FakeHub> {
  const server = createServer((req, res) => {
    hub.requests.push(req.url ?? '');
    if (hub.hang) return;
    if (req.url === '/healthz') {
      res.writeHead(hub.healthStatus, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const hub: FakeHub = {
    url: `http://127.0.0.1:${port}`,
    healthStatus: 200,
    hang: false,
    requests: [],
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  return hub;
}
