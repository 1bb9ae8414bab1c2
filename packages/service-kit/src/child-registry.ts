import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { signalProcessGroup } from './process-group';

export { signalProcessGroup } from './process-group';

const run = promisify(execFile);

/** A supervised child, as recorded: its name, its pid (also its process group) and when it started. */
interface ChildRecord {
  name: string;
  pid: number;
  started: string;
}

/**
 * When a process started, as the system says it (Linux: its start time in `/proc/<pid>/stat`; elsewhere
 * `ps -o lstart=`); null when it is gone or a zombie. Two reads that agree mean the same process, not a pid the
 * system gave to another one since.
 */
export async function processStartTime(pid: number): Promise<string | null> {
  let stat: string | undefined;
  try {
    stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && (await hasProc())) return null;
  }
  if (stat !== undefined) {
    // The command name (2nd field) is in parentheses and may hold anything: fields are counted after its ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is the state (3rd field), fields[19] the start time (22nd).
    return fields[0] === 'Z' ? null : (fields[19] ?? null);
  }
  try {
    const { stdout } = await run('ps', ['-o', 'lstart=', '-p', String(pid)]);
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

let procMounted: Promise<boolean> | undefined;
function hasProc(): Promise<boolean> {
  procMounted ??= fs.access('/proc/self/stat').then(
    () => true,
    () => false,
  );
  return procMounted;
}

/**
 * A supervisor's children on disk (`<state>/children.json`, 0600, in an owner-only directory): each spawn is
 * recorded with its start time, each exit removes it, and a clean stop removes the file. A supervisor that was
 * killed (SIGKILL, out of memory, a closed terminal) cannot stop its children; the next start reads the file
 * first and stops those still running (`stopLeftoverChildren`), so they do not keep its ports, answer its
 * readiness checks or serve with nobody supervising them. `svc runtime up` records its relay, console router,
 * tunnel connector and agents; the development stack (`pnpm start`) its services and `svc runtime up`.
 */
export class ChildRegistry {
  /** In spawn order: a child's place is taken when it is added, before its start time is read. */
  private readonly children = new Map<number, ChildRecord | 'pending'>();
  private saving: Promise<void> = Promise.resolve();

  constructor(private readonly file: string) {}

  async add(name: string, pid: number): Promise<void> {
    this.children.set(pid, 'pending');
    const started = await processStartTime(pid);
    if (this.children.get(pid) !== 'pending') return; // removed (or added again) meanwhile
    if (started === null) {
      this.children.delete(pid);
      return;
    }
    this.children.set(pid, { name, pid, started });
    await this.save();
  }

  async remove(pid: number): Promise<void> {
    if (this.children.delete(pid)) await this.save();
  }

  /** After a clean stop (every child stopped): nothing is left to record. */
  async clear(): Promise<void> {
    this.children.clear();
    await this.saving;
    await fs.rm(this.file, { force: true });
  }

  private save(): Promise<void> {
    const contents = JSON.stringify([...this.children.values()].filter((child) => child !== 'pending'));
    // One write at a time, in order; a failed write only loses the record (the runtime goes on).
    this.saving = this.saving.then(() => writePrivateFile(this.file, contents)).catch(() => undefined);
    return this.saving;
  }
}

/** Writes through a 0600 temporary file renamed over `file`, in a directory created owner-only (0700). */
async function writePrivateFile(file: string, contents: string): Promise<void> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const temporary = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await fs.writeFile(temporary, contents, { mode: 0o600, flag: 'wx' });
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}

export interface LeftoverOptions {
  /** Who left them, for the log line (default `a runtime`). */
  by?: string;
  /**
   * `together` (default): every child gets SIGTERM at once. `last-first`: one after the other, the last
   * started first, each given the whole grace period — for children that need the earlier ones to stop
   * cleanly (a runtime that reports its agents stopped to a hub started before it).
   */
  order?: 'together' | 'last-first';
}

function recordsOf(text: string): ChildRecord[] {
  try {
    const parsed: unknown = JSON.parse(text);
    if (!Array.isArray(parsed)) return [];
    return parsed.filter(
      (r): r is ChildRecord =>
        typeof r === 'object' &&
        r !== null &&
        typeof r.name === 'string' &&
        Number.isInteger(r.pid) &&
        r.pid > 1 &&
        typeof r.started === 'string',
    );
  } catch {
    return [];
  }
}

/**
 * Stops the children a supervisor that did not stop cleanly left running (see `ChildRegistry`): each recorded
 * process that still runs with the recorded start time gets SIGTERM to its group, then SIGKILL after
 * `graceMs`; a pid now held by another process is left alone. Called before the new supervisor starts anything
 * (with its lock held, when it has one).
 */
export async function stopLeftoverChildren(
  file: string,
  graceMs: number,
  log: (line: string) => void,
  options: LeftoverOptions = {},
): Promise<void> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return;
  }
  const same = async (record: ChildRecord) => (await processStartTime(record.pid)) === record.started;
  const left: ChildRecord[] = [];
  for (const record of recordsOf(text)) if (await same(record)) left.push(record);
  const by = options.by ?? 'a runtime';
  const stop = async (records: ChildRecord[]) => {
    for (const record of records) signalProcessGroup(record.pid, 'SIGTERM');
    const deadline = Date.now() + graceMs;
    for (const record of records) {
      while ((await same(record)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      if (await same(record)) signalProcessGroup(record.pid, 'SIGKILL');
      log(`stopped the ${record.name} (pid ${record.pid}) left running by ${by} that did not stop`);
    }
  };
  if (options.order === 'last-first') {
    for (const record of left.reverse()) await stop([record]);
  } else {
    await stop(left);
  }
  await fs.rm(file, { force: true });
}
