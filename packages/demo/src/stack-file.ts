import { existsSync, readFileSync } from 'node:fs';
import type { DevStackFile } from '@svc/dev-stack';

/** A failure the demo reports as one line, exactly as written. */
export class DemoError extends Error {
  override name = 'DemoError';
}

/**
 * What the demo reads from `.svc/dev-stack.json` (written by `pnpm start`, shaped by `DevStackFile`): every
 * field but the two API keys it does not use.
 */
export type StackFile = Omit<DevStackFile, 'api_keys'> & {
  api_keys: Pick<DevStackFile['api_keys'], 'agent_runtime' | 'workflow_all'>;
};

const REQUIRED_PATHS = [
  'hub_url',
  'workflow_url',
  'relay_url',
  'console_router_url',
  'workspace.id',
  'workspace.slug',
  'project.id',
  'project.code',
  'participant.email',
  'participant.password',
  'participant.token',
  'api_keys.agent_runtime',
  'api_keys.workflow_all',
] as const;

function valueAt(value: unknown, dotted: string): unknown {
  let node = value;
  for (const part of dotted.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

const START_HINT = 'run `pnpm start` first (in another terminal) and wait for "ready"';

/** Reads and checks the stack file; a missing, unreadable or incomplete file is a {@link DemoError}. */
export function readStackFile(file: string): StackFile {
  if (!existsSync(file)) throw new DemoError(`${file} does not exist: ${START_HINT}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new DemoError(`${file} cannot be read (${(error as Error).message}): ${START_HINT}`);
  }
  const missing = REQUIRED_PATHS.filter((p) => {
    const v = valueAt(parsed, p);
    return typeof v !== 'string' || v === '';
  });
  if (missing.length > 0) {
    throw new DemoError(`${file} lacks ${missing.join(', ')}: ${START_HINT}`);
  }
  return parsed as StackFile;
}

/** Every service in the file must answer `/readyz` with 200; otherwise the stack is not running. */
export async function checkStackReady(stack: StackFile, timeoutMs = 3000): Promise<void> {
  const services: [string, string][] = [
    ['hub-api', stack.hub_url],
    ['workflow-api', stack.workflow_url],
    ['relay', stack.relay_url],
    ['console-router', stack.console_router_url],
  ];
  const results = await Promise.all(
    services.map(async ([name, url]) => {
      try {
        const res = await fetch(`${url.replace(/\/+$/, '')}/readyz`, {
          signal: AbortSignal.timeout(timeoutMs),
        });
        await res.body?.cancel();
        return res.status === 200 ? null : `${name} at ${url} answers /readyz with HTTP ${res.status}`;
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        return `${name} at ${url} does not answer /readyz (${cause})`;
      }
    }),
  );
  const down = results.filter((r): r is string => r !== null);
  if (down.length > 0) throw new DemoError(`the stack is not running: ${down[0]}; ${START_HINT}`);
}

/** Whether a URL answers `/readyz` with 200 (used for the runtime host's readiness flags). */
export async function answersReady(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${url.replace(/\/+$/, '')}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}
