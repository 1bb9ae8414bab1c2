#!/usr/bin/env node
import path from 'node:path';
import { colourWanted, firstLine } from './format';
import { runDemo } from './demo';
import { DemoError } from './stack-file';

const env = process.env;
const repoRoot = path.resolve(__dirname, '..', '..', '..');
// A closed pipe (`pnpm demo | head`) ends the output, not the demo: the agent is still stopped cleanly.
let stdoutOpen = true;
process.stdout.on('error', () => (stdoutOpen = false));
const write = (line: string) => {
  if (stdoutOpen) process.stdout.write(`${line}\n`);
};

function timeoutMs(): number {
  const raw = env.SVC_DEMO_TIMEOUT_SECONDS;
  if (raw === undefined || raw === '') return 60_000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new DemoError(`SVC_DEMO_TIMEOUT_SECONDS must be a positive number of seconds, not "${raw}"`);
  }
  return seconds * 1000;
}

async function main(): Promise<void> {
  const interrupted = new AbortController();
  const onSignal = () => interrupted.abort(new DemoError('interrupted; the reference agent was stopped'));
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  await runDemo({
    repoRoot,
    stackFile: path.resolve(env.SVC_DEV_STACK_FILE ?? path.join(repoRoot, '.svc', 'dev-stack.json')),
    timeoutMs: timeoutMs(),
    colour: colourWanted(process.stdout.isTTY, env),
    verbose: env.SVC_DEMO_VERBOSE === '1',
    signal: interrupted.signal,
    write,
  });
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    const message =
      error instanceof DemoError
        ? error.message
        : `unexpected failure: ${error instanceof Error ? error.message : String(error)}`;
    process.stderr.write(`demo: ${firstLine(message)}\n`);
    process.exit(1);
  },
);
