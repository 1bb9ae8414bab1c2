import { ConfigError } from './env';

/** Error codes whose cause is a dependency that is not running; start-up says which and how to start it. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH']);

function describeStartupError(appName: string, error: unknown): string {
  if (error instanceof ConfigError) return error.message;
  const err = error as { code?: string; message?: string; address?: string; port?: number };
  if (err?.code && CONNECTION_CODES.has(err.code)) {
    const where = err.address ? ` at ${err.address}${err.port ? `:${err.port}` : ''}` : '';
    return `${appName}: cannot reach a dependency${where} (${err.code}); is it running?`;
  }
  if (err?.code === 'EADDRINUSE') return `${appName}: the port is already in use (${err.message ?? ''})`;
  return `${appName}: failed to start: ${err?.message ?? String(error)}`;
}

/**
 * Runs an app's entry point. A configuration or start-up failure prints exactly one line on stderr and
 * exits 1 — no stack trace for problems the operator can fix.
 */
export function runMain(appName: string, main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${describeStartupError(appName, error)}\n`);
    process.exit(1);
  });
}
