import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Logger } from './logger';

/** What reading the runtime key file gave: the key, or why there is none (never the file's contents). */
export type RuntimeKeyFileRead = { ok: true; key: string } | { ok: false; reason: string };

function parsed(text: string): RuntimeKeyFileRead {
  const key = text.trim();
  if (!key) return { ok: false, reason: 'the file is empty' };
  if (/\s/.test(key)) return { ok: false, reason: 'the file holds more than one word' };
  return { ok: true, key };
}

function failure(error: unknown): RuntimeKeyFileRead {
  const code = (error as { code?: unknown })?.code;
  return { ok: false, reason: `the file cannot be read${typeof code === 'string' ? ` (${code})` : ''}` };
}

/**
 * Reads the host's runtime key from `SVC_WORKSPACE_API_KEY_FILE` (the relay's and the console router's; written
 * owner-only by `svc runtime up`, which rewrites it and sends SIGHUP when the key is rotated): one word,
 * surrounding whitespace ignored.
 */
export async function readRuntimeKeyFile(file: string): Promise<RuntimeKeyFileRead> {
  try {
    return parsed(await readFile(file, 'utf8'));
  } catch (error) {
    return failure(error);
  }
}

/** {@link readRuntimeKeyFile} at start-up, before anything listens. */
export function readRuntimeKeyFileSync(file: string): RuntimeKeyFileRead {
  try {
    return parsed(readFileSync(file, 'utf8'));
  } catch (error) {
    return failure(error);
  }
}

/**
 * The key to start with: the file's when `file` is set and holds one, else `fallback` (`SVC_WORKSPACE_API_KEY`).
 * A file that cannot be used is logged in one line (its path and why, never a key).
 */
export function runtimeKeyAtStart(
  file: string | undefined,
  fallback: string | undefined,
  logger: Logger,
): string | undefined {
  if (!file) return fallback;
  const read = readRuntimeKeyFileSync(file);
  if (read.ok) return read.key;
  logger.warn(
    { file, reason: read.reason, fallback: fallback ? 'SVC_WORKSPACE_API_KEY' : null },
    'runtime key file not used',
  );
  return fallback;
}

/**
 * Re-reads the key file (on SIGHUP): resolves with the new key when it differs from `current`, with undefined
 * when it is the same or the file cannot be used (one line logged; the key in use stays).
 */
export async function reloadRuntimeKey(
  file: string | undefined,
  current: string | undefined,
  logger: Logger,
): Promise<string | undefined> {
  if (!file) {
    logger.warn('SIGHUP: no SVC_WORKSPACE_API_KEY_FILE to re-read; the key in use stays');
    return undefined;
  }
  const read = await readRuntimeKeyFile(file);
  if (!read.ok) {
    logger.warn({ file, reason: read.reason }, 'SIGHUP: runtime key file not read; the key in use stays');
    return undefined;
  }
  if (read.key === current) {
    logger.info({ file }, 'SIGHUP: runtime key unchanged');
    return undefined;
  }
  logger.info({ file, key_prefix: keyPrefix(read.key) }, 'SIGHUP: switched to the runtime key in the file');
  return read.key;
}

/**
 * A SIGHUP handler that runs `reload` (the key file re-read) one at a time: a hangup during a reload waits for
 * it, and a failed reload does not stop the next one.
 */
export function serializedReload(reload: () => Promise<unknown>): () => void {
  let chain: Promise<void> = Promise.resolve();
  return () => {
    chain = chain.then(reload).then(
      () => undefined,
      () => undefined,
    );
  };
}

/** The public prefix of a workspace API key (`svc_<prefix>_…`), never its secret part. */
function keyPrefix(key: string): string {
  return /^svc_([a-z0-9]+)_/.exec(key)?.[1] ?? 'unknown';
}
