// --fairness of bench/workflow-run.mjs: project B's client in a worker thread of its own. Project B is another
// partner, not a request in project A's queue: run from the bench's main thread, B's requests shared its event
// loop and its connection pool with A's burst of a thousand, and the bench measured its own line as the
// service's. Not a bench itself.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startThread } from '../harness/threads.mjs';
import { runClient } from './client.mjs';
import { RequestFailed } from './runs.mjs';

/**
 * Starts the thread for `client` (its invocations URL and headers) with the run settings; resolves to a client
 * whose `oneRun` is run and timed in the thread, and `close()`.
 */
export async function startProjectThread(client, settings) {
  const thread = await startThread(new URL(import.meta.url), { client, settings });
  return {
    async oneRun() {
      const answer = await thread.ask('run');
      if (answer.error) throw new RequestFailed(answer.error.label, answer.error.detail);
      return answer.run;
    },
    close: () => thread.close(),
  };
}

if (!isMainThread && workerData?.client) {
  const client = runClient(workerData.client, workerData.settings);
  parentPort.on('message', (message) => {
    if (message.type === 'close') {
      parentPort.close();
      return;
    }
    if (message.type !== 'run') return;
    client.oneRun().then(
      (run) => parentPort.postMessage({ type: 'run', seq: message.seq, run }),
      (error) =>
        parentPort.postMessage({
          type: 'run',
          seq: message.seq,
          error: {
            label: error?.label ?? String(error?.message ?? error),
            ...(error?.detail ? { detail: error.detail } : {}),
          },
        }),
    );
  });
  // No server: the port 0 only tells the bench the thread is ready.
  parentPort.postMessage({ type: 'listening', port: 0 });
}
