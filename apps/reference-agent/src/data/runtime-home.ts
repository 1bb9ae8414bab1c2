import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';

/** The file of the agent's provider runtime state inside its runtime home. */
export const RUNTIME_STATE_FILE = 'runtime-state.json';

const runtimeStateSchema = z.object({
  model: z.string().min(1).max(200),
  updated_at: z.string().min(1),
});

/** What the runtime remembers between runs: the exact `provider/model` it uses, and when it last wrote it. */
export type RuntimeState = z.infer<typeof runtimeStateSchema>;

export interface RuntimeStateRead {
  state?: RuntimeState;
  /** Why a file that exists was not used (it is rewritten at the next write). */
  problem?: string;
}

const isNotFound = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';

/**
 * The agent's own runtime home (`AGENT_RUNTIME_HOME`): an owner-only directory (0700) holding
 * `runtime-state.json` (0600). Nothing else of the host is read or written, so clearing one agent's home
 * touches no other agent.
 */
export class RuntimeHome {
  readonly file: string;

  constructor(readonly dir: string) {
    this.file = path.join(dir, RUNTIME_STATE_FILE);
  }

  /**
   * Creates the directory (0700), or makes an existing one owner-only again; refuses a path that is not a
   * directory or that belongs to another user.
   */
  async prepare(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST' || code === 'ENOTDIR') {
        throw new Error(`AGENT_RUNTIME_HOME (${this.dir}) is not a directory`, { cause: error });
      }
      throw error;
    }
    const info = await stat(this.dir);
    if (!info.isDirectory()) throw new Error(`AGENT_RUNTIME_HOME (${this.dir}) is not a directory`);
    const uid = process.getuid?.();
    if (uid !== undefined && info.uid !== uid) {
      throw new Error(`AGENT_RUNTIME_HOME (${this.dir}) belongs to another user (uid ${info.uid})`);
    }
    if ((info.mode & 0o777) !== 0o700) await chmod(this.dir, 0o700);
  }

  /** The remembered state; none when the file is absent, and none with a `problem` when it is unusable. */
  async read(): Promise<RuntimeStateRead> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return {};
      throw error;
    }
    if (((await stat(this.file)).mode & 0o077) !== 0) await chmod(this.file, 0o600);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { problem: `${RUNTIME_STATE_FILE} is not valid JSON` };
    }
    const result = runtimeStateSchema.safeParse(parsed);
    if (!result.success) return { problem: `${RUNTIME_STATE_FILE} has no usable model` };
    return { state: result.data };
  }

  /** Writes the state atomically (a 0600 file renamed over the old one). */
  async write(model: string, at: Date): Promise<RuntimeState> {
    const state: RuntimeState = { model, updated_at: at.toISOString() };
    const temporary = path.join(
      this.dir,
      `.${RUNTIME_STATE_FILE}.${process.pid}.${randomBytes(4).toString('hex')}`,
    );
    try {
      await writeFile(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      await chmod(temporary, 0o600);
      await rename(temporary, this.file);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    return state;
  }
}
