#!/usr/bin/env node
import path from 'node:path';
import { watchDeliveries } from './delivery-watcher';
import { checkStackReady, DemoError, readStackFile } from './stack-file';

const env = process.env;
const repoRoot = path.resolve(__dirname, '..', '..', '..');
const write = (line: string) => process.stdout.write(`${line}\n`);

/**
 * `pnpm deliveries:watch`: with `pnpm start` running, prints every signed delivery of the development project
 * as it arrives (verified with the subscription's secret), until Ctrl-C removes the subscription.
 */
async function main(): Promise<void> {
  const stack = readStackFile(
    path.resolve(env.SVC_DEV_STACK_FILE ?? path.join(repoRoot, '.svc', 'dev-stack.json')),
  );
  await checkStackReady(stack);
  const port = Number(env.SVC_DELIVERY_WATCH_PORT ?? 4350);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new DemoError(
      `SVC_DELIVERY_WATCH_PORT must be a port number, not "${env.SVC_DELIVERY_WATCH_PORT}"`,
    );
  }
  const watcher = await watchDeliveries({ stack, port, print: write });
  write(
    `watching deliveries of project ${stack.project.code} at ${watcher.url} (subscription ${watcher.subscriptionId})`,
  );
  write('each line is a delivery whose signature verified; Ctrl-C unsubscribes and stops');
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void watcher.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  const message =
    error instanceof DemoError ? error.message : `deliveries:watch: ${(error as Error).message}`;
  process.stderr.write(`${message.split('\n')[0]}\n`);
  process.exit(1);
});
