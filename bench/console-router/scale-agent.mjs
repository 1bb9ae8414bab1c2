// The agent of bench/console-router.mjs's scale phases (--consoles, --streams, --propagation), run as its own
// process (`fork`): HTTP 200 with a small JSON body to any request; WebSockets on `/terminal` stay idle (echo)
// and are pinged every `pingMs` as the agent console pings its clients; WebSockets on `/stream` receive
// `frameBytes`-byte binary frames at `bytesPerSecond`, each starting with the time it was sent (ms since the
// epoch, float64, from `performance.timeOrigin + performance.now()`, comparable across processes).
// Started with: node scale-agent.mjs <pingMs> <bytesPerSecond> <frameBytes>; says `{ port }` on IPC.
import http from 'node:http';
import { requireFrom } from '../harness/cli.mjs';

const { WebSocketServer } = requireFrom('packages/agent-console', 'ws');
const [pingMs, bytesPerSecond, frameBytes] = process.argv.slice(2).map(Number);
const now = () => performance.timeOrigin + performance.now();

const server = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
});
server.keepAliveTimeout = 120_000;
const wss = new WebSocketServer({ server, perMessageDeflate: false });
const streams = new Set();
wss.on('connection', (ws, req) => {
  ws.on('error', () => undefined);
  if (req.url?.startsWith('/stream')) {
    streams.add(ws);
    ws.on('close', () => streams.delete(ws));
  } else ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
});

// One timer for every stream: each tick sends every stream one frame (spread over the tick by the kernel).
const interval = Math.max(5, Math.round((frameBytes / bytesPerSecond) * 1000));
setInterval(() => {
  for (const ws of streams) {
    if (ws.bufferedAmount > frameBytes * 8) continue; // a client that does not keep up drops frames, not memory
    const frame = Buffer.allocUnsafe(frameBytes);
    frame.writeDoubleLE(now(), 0);
    ws.send(frame, { binary: true });
  }
}, interval);
// Pings to every idle console every `pingMs`, as the agent console does (every 30 s there). Spread over the
// interval in slices of 100 ms: thousands of consoles belong to many agents, whose timers do not fire at the same
// instant; pinging all 8 000 in one loop sent a storm through the router every interval that the streams beside
// it queued behind, a load no fleet makes.
const SLICE_MS = Math.min(100, pingMs);
const slices = Math.max(1, Math.round(pingMs / SLICE_MS));
let slice = 0;
setInterval(() => {
  let i = 0;
  for (const ws of wss.clients) {
    if (i % slices === slice && !streams.has(ws)) ws.ping();
    i += 1;
  }
  slice = (slice + 1) % slices;
}, SLICE_MS);

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port, intervalMs: interval }));
process.on('disconnect', () => process.exit(0));
