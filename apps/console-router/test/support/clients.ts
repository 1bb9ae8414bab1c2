import http from 'node:http';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';

export interface Answer {
  status: number;
  type: string;
  body: Record<string, unknown> | undefined;
  text: string;
}

/** A request through node:http (so `Host` can be any value), the answer parsed as JSON when it is. */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          let body: Record<string, unknown> | undefined;
          try {
            body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'] ?? '', body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

export const PUBLIC_ORIGIN = 'https://console.example.test';

/** Opens a WebSocket; resolves once open, or rejects with the HTTP status the upgrade was answered with. */
export function openSocket(
  url: string,
  headers: Record<string, string> = { origin: PUBLIC_ORIGIN },
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const error = Object.assign(new Error(`upgrade answered ${res.statusCode}`), {
          status: res.statusCode,
          contentType: res.headers['content-type'],
          body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
        });
        reject(error);
      });
      res.on('error', reject);
    });
    ws.once('error', reject);
  });
}

/** Waits until the terminal has printed `expected` (bytes arrive as binary frames). */
export function readUntil(ws: WebSocket, expected: string, timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      ws.off('message', onMessage);
      reject(new Error(`terminal did not print ${JSON.stringify(expected)}; saw ${JSON.stringify(seen)}`));
    }, timeoutMs);
    const onMessage = (data: WebSocket.RawData) => {
      seen += Buffer.isBuffer(data)
        ? data.toString('utf8')
        : Buffer.from(data as ArrayBuffer).toString('utf8');
      if (seen.includes(expected)) {
        clearTimeout(timer);
        ws.off('message', onMessage);
        resolve(seen);
      }
    };
    ws.on('message', onMessage);
  });
}

export function closed(ws: WebSocket, timeoutMs = 10_000): Promise<number> {
  if (ws.readyState === WebSocket.CLOSED) return Promise.resolve(-1);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('socket still open')), timeoutMs);
    ws.once('close', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** A server standing for an agent: it records what reaches it and answers 200 JSON. */
export interface EchoAgent {
  port: number;
  seen: { url: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function startEchoAgent(port = 0): Promise<EchoAgent> {
  const seen: EchoAgent['seen'] = [];
  const server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  server.on('upgrade', (req, socket) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    socket.on('error', () => undefined);
    // Not a WebSocket server: answers the upgrade with plain HTTP.
    socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
