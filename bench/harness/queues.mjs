// BullMQ as a baseline: a queue and a Worker whose processor does nothing, on the bench's Redis under a prefix
// of their own, so what a service adds on top of the queue can be told apart. Not a bench itself.
import { requireFrom, testing } from './cli.mjs';
import { redisUrl } from './stack.mjs';

/** The Workflow API's BullMQ (the version the services run). */
export const bullmq = () => requireFrom('apps/workflow-api', 'bullmq');

/** Connection options of the bench's Redis, for BullMQ. */
export const redisConnection = () => testing().redisConnectionOptions(redisUrl);

/**
 * Queue `name` under `prefix` with a no-op Worker of `concurrency` (and QueueEvents when `events`), resolved
 * once all are ready. `close()` (once, whoever asks) closes them and removes the prefix's keys.
 */
export async function noopQueue(name, { prefix, concurrency, events = false }) {
  const { Queue, QueueEvents, Worker } = bullmq();
  const connection = redisConnection();
  const queue = new Queue(name, { connection, prefix });
  const queueEvents = events ? new QueueEvents(name, { connection, prefix }) : undefined;
  const worker = new Worker(name, async () => null, { connection, prefix, concurrency });
  let closing;
  const close = () =>
    (closing ??= (async () => {
      await Promise.allSettled([worker.close(), queueEvents?.close()]);
      await queue.close();
      await testing().obliterateQueues(redisUrl, prefix, [name]);
    })());
  try {
    await Promise.all([queue.waitUntilReady(), queueEvents?.waitUntilReady(), worker.waitUntilReady()]);
  } catch (error) {
    await close();
    throw error;
  }
  return { queue, events: queueEvents, worker, close };
}

/**
 * Enqueues one job per id in chunks of `chunk` (job id = the id, removed when done, as the services do),
 * until `interrupted`; resolves to the start, each id's enqueue time (per chunk) and how long it took.
 */
export async function enqueueInChunks(queue, name, ids, { data, chunk, now, interrupted }) {
  const enqueuedAt = new Map();
  const start = now();
  for (let at = 0; at < ids.length && !interrupted.aborted; at += chunk) {
    const some = ids.slice(at, at + chunk);
    const t = now();
    for (const id of some) enqueuedAt.set(id, t);
    await queue.addBulk(
      some.map((id) => ({
        name,
        data: data(id),
        opts: { jobId: id, removeOnComplete: true, removeOnFail: true },
      })),
    );
  }
  return { start, enqueuedAt, enqueueMs: now() - start };
}
