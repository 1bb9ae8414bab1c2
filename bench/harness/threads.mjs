// A server of a bench in a worker thread of its own (an upstream, a receiver), so its event loop is not shared
// with the load generators: started from the bench's own module, asked questions and told to close. Not a
// bench itself.
import { Worker as Thread, parentPort } from 'node:worker_threads';
import { idle } from './stack.mjs';

/**
 * Runs `moduleUrl` in a worker thread with `data` as its `workerData`; resolves once the thread says
 * `listening` (see {@link serveFromThread}). `ask(type, extra)` posts a question and resolves to its answer;
 * `on(type, handler)` hears what the thread says by itself; `close()` asks it to close, and after `closeMs`
 * ends it.
 */
export async function startThread(moduleUrl, data, { closeMs = 2_000 } = {}) {
  const thread = new Thread(moduleUrl, { workerData: data });
  const pending = new Map();
  const handlers = new Map();
  let seq = 0;
  const port = await new Promise((resolve, reject) => {
    thread.on('message', (message) => {
      if (message.type === 'listening') resolve(message.port);
      else if (message.seq !== undefined) pending.get(message.seq)?.(message);
      else handlers.get(message.type)?.(message);
    });
    thread.on('error', reject);
    thread.once('exit', (code) => reject(new Error(`the thread exited (${code})`)));
  });
  return {
    port,
    on: (type, handler) => handlers.set(type, handler),
    ask: (type, extra = {}) =>
      new Promise((resolve) => {
        seq += 1;
        pending.set(seq, (message) => {
          pending.delete(message.seq);
          resolve(message);
        });
        thread.postMessage({ type, seq, ...extra });
      }),
    async close() {
      thread.postMessage({ type: 'close' });
      await Promise.race([new Promise((resolve) => thread.once('exit', resolve)), idle(closeMs)]);
      await thread.terminate();
    },
  };
}

/**
 * In the thread: `server` listens on a free 127.0.0.1 port and the bench is told which; each question is
 * answered by `answers[type](message)` (its result is posted back, with the transfer list `transfer` when it
 * returns one); `close` closes the server and ends the thread. `say(type, extra)` tells the bench something
 * by itself.
 */
export function serveFromThread(server, answers = {}) {
  server.listen(0, '127.0.0.1', () =>
    parentPort.postMessage({ type: 'listening', port: server.address().port }),
  );
  parentPort.on('message', (message) => {
    if (message.type === 'close') {
      server.closeAllConnections?.();
      server.close(() => parentPort.close());
      return;
    }
    const { transfer, ...answer } = answers[message.type]?.(message) ?? {};
    parentPort.postMessage({ type: message.type, seq: message.seq, ...answer }, transfer);
  });
  return { say: (type, extra = {}) => parentPort.postMessage({ type, ...extra }) };
}
