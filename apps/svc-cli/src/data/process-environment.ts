import { promises as fs } from 'node:fs';

/**
 * The environment a local process was started with (`/proc/<pid>/environ`, readable by the account that owns
 * the process: the runtime's own agents). Undefined where there is no such file (not Linux, process gone) or it
 * cannot be read. Values may be secrets: callers never print them.
 */
export async function readProcessEnvironment(pid: number): Promise<Record<string, string> | undefined> {
  let raw: Buffer;
  try {
    raw = await fs.readFile(`/proc/${pid}/environ`);
  } catch {
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const entry of raw.toString('utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}
