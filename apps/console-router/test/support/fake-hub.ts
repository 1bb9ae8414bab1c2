import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeHub {
  url: string;
  /** Status and body `/.well-known/jwks.json` answers with (by default one ES256 public key). */
  jwksStatus: number;
  jwksBody: string;
  /** When true, requests are never answered (a hub that hangs). */
  hang: boolean;
  /** Paths requested so far. */
  requests: string[];
  close(): Promise<void>;
}

function publicJwks(): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return JSON.stringify({ keys: [{ ...jwk, kid: 'test-key', alg: 'ES256', use: 'sig' }] });
}

/** A local stand-in for the hub: answers `/.well-known/jwks.json` on 127.0.0.1, 404 elsewhere. */
export async function startFakeHub(): Promise<FakeHub> {
  const server = createServer((req, res) => {
    hub.requests.push(req.url ?? '');
    if (hub.hang) return;
    if (req.url === '/.well-known/jwks.json') {
      res.writeHead(hub.jwksStatus, { 'content-type': 'application/json' }).end(hub.jwksBody);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const hub: FakeHub = {
    url: `http://127.0.0.1:${port}`,
    jwksStatus: 200,
    jwksBody: publicJwks(),
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
