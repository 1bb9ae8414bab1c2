// A client process of bench/console-router.mjs's scale phases (`fork`, several at once so no one process holds
// more than a few thousand sockets): on `open` it opens idle consoles (WebSockets left open, answering the
// agent's pings); on `stream` it opens streaming consoles for a while and reports every frame's latency (sent
// time in the frame → received here) and the bytes received; on `count` it says how many are still open.
import { requireFrom } from '../harness/cli.mjs';

const WebSocket = requireFrom('packages/agent-console', 'ws');
const now = () => performance.timeOrigin + performance.now();
const idle = [];
let closedEarly = 0;

function connect(url, headers) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 30_000 });
    ws.once('open', () => resolve(ws));
    ws.once('error', (error) => resolve(error));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve(new Error(`HTTP ${res.statusCode}`));
    });
  });
}

/** Opens `count` sockets, `batch` at a time; the failures by message. */
async function openMany(url, headers, count, batch, onOpen) {
  const errors = {};
  for (let done = 0; done < count; done += batch) {
    const results = await Promise.all(
      Array.from({ length: Math.min(batch, count - done) }, () => connect(url, headers)),
    );
    for (const result of results) {
      if (result instanceof Error) errors[result.message] = (errors[result.message] ?? 0) + 1;
      else onOpen(result);
    }
  }
  return errors;
}

process.on('message', async (message) => {
  if (message.type === 'open') {
    const errors = await openMany(message.url, message.headers, message.count, message.batch, (ws) => {
      idle.push(ws);
      ws.on('error', () => undefined);
      ws.once('close', () => (closedEarly += 1));
    });
    process.send({ type: 'opened', open: idle.length, errors });
  } else if (message.type === 'count') {
    process.send({
      type: 'count',
      open: idle.filter((ws) => ws.readyState === WebSocket.OPEN).length,
      closed: closedEarly,
    });
  } else if (message.type === 'stream') {
    const latencies = [];
    let bytes = 0;
    let frames = 0;
    let recording = false;
    const streams = [];
    const errors = await openMany(message.url, message.headers, message.count, message.batch, (ws) => {
      streams.push(ws);
      ws.on('error', () => undefined);
      ws.on('message', (data) => {
        if (!recording) return;
        latencies.push(now() - data.readDoubleLE(0));
        bytes += data.length;
        frames += 1;
      });
    });
    // Every stream is open: warm up, then record for the given time.
    await new Promise((resolve) => setTimeout(resolve, message.warmupMs));
    recording = true;
    const started = now();
    await new Promise((resolve) => setTimeout(resolve, message.ms));
    recording = false;
    const ms = now() - started;
    const open = streams.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    for (const ws of streams) ws.terminate();
    process.send({ type: 'streamed', latencies, bytes, frames, ms, open, errors });
  } else if (message.type === 'close') {
    for (const ws of idle) ws.terminate();
    process.send({ type: 'closed' });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });
