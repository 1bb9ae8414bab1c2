// The upstream of bench/console-router.mjs, standing in for an agent: a `node:http` server answering a fixed
// body to every request, with a `ws` WebSocket echo on the same port, in a worker thread so the load
// generators do not share its event loop. It ignores the headers a proxy adds.
import http from 'node:http';
import { isMainThread, workerData } from 'node:worker_threads';
import { requireFrom } from '../harness/cli.mjs';
import { serveFromThread, startThread } from '../harness/threads.mjs';

function upstreamThread() {
  const { WebSocketServer } = requireFrom('packages/agent-console', 'ws');
  const body = Buffer.from(workerData.body);
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
  // Proxies keep pooled connections open between slices; the upstream must not close them under their feet.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 121_000;
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (ws) => {
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
    ws.on('error', () => undefined);
  });
  serveFromThread(server);
}

/** Starts the upstream answering `body`; resolves once it listens, with its port. */
export async function startUpstream(body) {
  const thread = await startThread(new URL(import.meta.url), { body });
  return { port: thread.port, close: () => thread.close() };
}

if (!isMainThread) upstreamThread();
