// The receiver of bench/workflow-delivery.mjs: an HTTP(S) server in a worker thread, so its event loop is not
// shared with the load generators. It verifies every request as a partner does, with `Webhook` of the built SDK
// (`@svc/sdk`), counts unique delivery ids and answers 204.
import http from 'node:http';
import https from 'node:https';
import { isMainThread, workerData } from 'node:worker_threads';
import { load } from '../harness/cli.mjs';
import { serveFromThread, startThread } from '../harness/threads.mjs';

/** Milliseconds since the epoch, precise and comparable between the threads of this process. */
export const now = () => performance.timeOrigin + performance.now();

function receiverThread() {
  const { Webhook } = load('packages/sdk/dist/cjs/index.js');
  const { secret, tls } = workerData;
  // The receiver counts repeated ids itself, so the SDK's own deduplication is off.
  const webhook = new Webhook(secret, { dedupe: false });
  let seen = new Map();
  let expect = Infinity;
  let requests = 0;
  let duplicates = 0;
  let rejected = 0;
  let rejectCodes = {};
  let connections = 0;
  let thread;
  const handle = (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const at = now();
      requests += 1;
      let deliveryId;
      try {
        deliveryId = (await webhook.verify(Buffer.concat(chunks), req.headers)).id;
      } catch (error) {
        rejected += 1;
        const code = error?.code ?? 'error';
        rejectCodes[code] = (rejectCodes[code] ?? 0) + 1;
        res.writeHead(400, { 'content-type': 'text/plain' }).end(code);
        return;
      }
      if (seen.has(deliveryId)) {
        duplicates += 1;
      } else {
        seen.set(deliveryId, at);
        if (seen.size === expect) thread.say('complete', { at });
      }
      res.writeHead(204).end();
    });
  };
  const serverOptions = { keepAliveTimeout: 60_000, requestTimeout: 60_000 };
  const server = tls
    ? https.createServer({ ...serverOptions, key: tls.key, cert: tls.cert }, handle)
    : http.createServer(serverOptions, handle);
  // Connections opened (after the TLS handshake for HTTPS): keep-alive reuse shows as few of them.
  server.on(tls ? 'secureConnection' : 'connection', () => {
    connections += 1;
  });
  thread = serveFromThread(server, {
    reset(message) {
      seen = new Map();
      expect = message.expect;
      requests = 0;
      duplicates = 0;
      rejected = 0;
      rejectCodes = {};
      connections = 0;
    },
    report() {
      const ids = [...seen.keys()];
      const times = Float64Array.from(seen.values());
      const counts = { requests, duplicates, rejected, rejectCodes, connections };
      return { ids, times, ...counts, transfer: [times.buffer] };
    },
  });
}

/** Starts the receiver thread; resolves once it listens. */
export async function startReceiver({ secret, tls }) {
  const thread = await startThread(new URL(import.meta.url), { secret, tls });
  let completion;
  let onComplete;
  thread.on('complete', (message) => onComplete?.(message.at));
  return {
    port: thread.port,
    /** Forgets every id seen; `completed()` then resolves when `expect` unique ids have arrived. */
    async reset(expect) {
      completion = new Promise((resolve) => (onComplete = resolve));
      await thread.ask('reset', { expect });
    },
    completed: () => completion,
    report: () => thread.ask('report'),
    close: () => thread.close(),
  };
}

if (!isMainThread) receiverThread();
