import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type WebSocket from 'ws';
import { createJwksDocument, createTokenIssuer, generateSigningKey } from '@svc/auth';

export const TOKEN_HUB_HOST = 'rti_tokenhub';
export const WORKSPACE_SLUG = 'acme';

/**
 * A local stand-in for the hub that signs participant tokens the router accepts: its JWKS and one host's route
 * table (members and routes set by the test, ETag and 304 as the hub answers).
 */
export interface TokenHub {
  url: string;
  /** A participant JWT for `participant` (a member when listed in `members`). */
  token(participant: string): string;
  /** Replaces the table: `routes` as agent id → serve port, every agent started. */
  setTable(members: string[], routes: Record<string, number>): void;
  /** The router's environment against this hub. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startTokenHub(): Promise<TokenHub> {
  const key = generateSigningKey();
  const jwks = JSON.stringify(createJwksDocument([key.publicJwk]));
  const runtimeKey = `svk_${randomBytes(12).toString('hex')}`;
  let table = { version: '', body: '' };
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.url === '/.well-known/jwks.json')
      return res.writeHead(200, { 'content-type': 'application/json' }).end(jwks);
    if (req.url?.startsWith(`/api/v1/runtime-hosts/${TOKEN_HUB_HOST}/console-routes`)) {
      const etag = `"${table.version}"`;
      if (req.headers['if-none-match'] === etag) return res.writeHead(304, { etag }).end();
      return res.writeHead(200, { 'content-type': 'application/json', etag }).end(table.body);
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = createTokenIssuer({
    issuer: url,
    keys: [{ kid: key.kid, privateKeyPem: key.privateKeyPem }],
    activeKid: key.kid,
  });
  const hub: TokenHub = {
    url,
    token: (participant) =>
      issuer.issue({
        audience: 'participant',
        subject: participant,
        ttlSeconds: 3600,
        claims: { email: `${participant}@example.test` },
      }).token,
    setTable(members, routes) {
      const content = {
        host_id: TOKEN_HUB_HOST,
        workspace: { id: 'wsp_tokenhub', slug: WORKSPACE_SLUG },
        members,
        routes: Object.entries(routes).map(([agentId, port]) => ({
          agent_id: agentId,
          agent_name: agentId,
          route: `/${WORKSPACE_SLUG}/agents/${agentId}`,
          serve_port: port,
          status: 'online',
          peers: [],
        })),
      };
      const version = createHash('sha256').update(JSON.stringify(content)).digest('hex');
      table = {
        version,
        body: JSON.stringify({ data: { ...content, version, generated_at: new Date().toISOString() } }),
      };
    },
    env: () => ({
      HUB_URL: url,
      SVC_RUNTIME_INSTANCE_ID: TOKEN_HUB_HOST,
      SVC_WORKSPACE_API_KEY: runtimeKey,
      CONSOLE_ROUTER_UPSTREAM_SECRET: randomBytes(32).toString('base64url'),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  hub.setTable([], {});
  return hub;
}

/** A WebSocket agent: echoes every message and records each one's size; counts its open sockets. */
export interface WsAgent {
  port: number;
  received: number[];
  open(): number;
  close(): Promise<void>;
}

export async function startWsAgent(): Promise<WsAgent> {
  const server = http.createServer((_req, res) => res.writeHead(200).end('{}'));
  const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: 64 * 1024 * 1024 });
  const received: number[] = [];
  wss.on('connection', (ws: WebSocket) => {
    ws.on('message', (data: Buffer, isBinary) => {
      received.push(data.length);
      ws.send(data, { binary: isBinary });
    });
    ws.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    received,
    open: () => wss.clients.size,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
