import { promises as fs } from 'node:fs';

/** What one HTTP GET of `svc config doctor` answered; never throws, never sends a credential. */
export interface ProbeAnswer {
  url: string;
  /** HTTP status, or null when nothing answered. */
  status: number | null;
  /** The `Date` header of the answer. */
  date: string | null;
  /** The JSON body, when it was JSON. */
  body: unknown;
  /** Why nothing answered (`ECONNREFUSED`, `timeout`, …). */
  error: string | null;
  /** Local clock (ms) when the request was sent and when the answer arrived. */
  sentAt: number;
  receivedAt: number;
}

export async function probeHttp(url: string, options: { timeoutMs?: number } = {}): Promise<ProbeAnswer> {
  const sentAt = Date.now();
  try {
    const res = await fetch(url, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text ? (JSON.parse(text) as unknown) : null;
    } catch {
      body = null;
    }
    const date = res.headers.get('date');
    return { url, status: res.status, date, body, error: null, sentAt, receivedAt: Date.now() };
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string }; message?: string };
    const reason =
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? 'timeout'
        : (e.cause?.code ?? e.message ?? 'failed');
    return { url, status: null, date: null, body: null, error: reason, sentAt, receivedAt: Date.now() };
  }
}

/** Permission bits of `file`, or null when it does not exist. */
export async function permissionBits(file: string): Promise<number | null> {
  try {
    return (await fs.stat(file)).mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Entries of a directory, sorted, or none when it does not exist. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await fs.readdir(dir)).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** A file's text, or undefined when it does not exist. Unlike the profile store, it never changes the mode. */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
