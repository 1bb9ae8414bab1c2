import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the built reference agent's entry point (`dist/main.js` of `@svc/reference-agent`) is: next to an
 * installed `@svc/reference-agent` package, else beside this CLI in the monorepo (`apps/reference-agent`).
 * Undefined when neither exists; `svc start` then needs `--command`.
 */
export function referenceAgentMain(): string | undefined {
  const candidates: string[] = [];
  try {
    candidates.push(path.join(path.dirname(require.resolve('@svc/reference-agent')), 'main.js'));
  } catch {
    // Not installed with the CLI.
  }
  // dist/data/ → apps/svc-cli → apps/reference-agent/dist/main.js
  candidates.push(path.resolve(__dirname, '..', '..', '..', 'reference-agent', 'dist', 'main.js'));
  return candidates.find((file) => existsSync(file));
}

/** The default agent command: this Node binary running the reference agent, or undefined when it is absent. */
export function defaultAgentArgv(): string[] | undefined {
  const main = referenceAgentMain();
  return main ? [process.execPath, main] : undefined;
}
