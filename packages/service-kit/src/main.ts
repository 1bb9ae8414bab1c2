import { setFlagsFromString } from 'node:v8';
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
 * WebAssembly stays in V8's baseline compiler (Liftoff). The only WebAssembly the services run is Prisma's query
 * compiler, and only for a query shape not yet in the client's plan cache. With the optimizing tier, V8 compiles
 * the whole module again in the background a few seconds after the first query, which held 35–80 MB more RSS
 * in the hub, the Workflow API and its worker for the life of the process (docs/benchmarks.md, "Service
 * memory"). The flag must be set before the first module is compiled: the entry point sets it first.
 */
export function keepWebAssemblyBaseline(): void {
  setFlagsFromString('--liftoff-only');
}

/**
 * Runs an app's entry point. A configuration or start-up failure prints exactly one line on stderr and
 * exits 1 — no stack trace for problems the operator can fix.
 */
export function runMain(appName: string, main: () => Promise<void>): void {
  keepWebAssemblyBaseline();
  main().catch((error: unknown) => {
    process.stderr.write(`${describeStartupError(appName, error)}\n`);
    process.exit(1);
  });
}
