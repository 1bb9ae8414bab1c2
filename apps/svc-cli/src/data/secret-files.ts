import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

/** Mode of directories that hold secrets: read, write and search for the owner only. */
export const OWNER_ONLY_DIR_MODE = 0o700;
/** Mode of files that hold secrets: read and write for the owner only. */
export const SECRET_FILE_MODE = 0o600;

/**
 * Creates `dir` (and missing parents) if needed and makes sure it is a directory owned by the
 * current user with mode 0700. An existing directory with looser permissions is tightened.
 */
export async function ensureOwnerOnlyDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: OWNER_ONLY_DIR_MODE });
  const stat = await fs.stat(dir);
  if (!stat.isDirectory()) {
    throw new Error(`${dir} exists but is not a directory`);
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new Error(`${dir} is owned by uid ${stat.uid}, not by the current user (uid ${uid})`);
  }
  if ((stat.mode & 0o777) !== OWNER_ONLY_DIR_MODE) {
    await fs.chmod(dir, OWNER_ONLY_DIR_MODE);
  }
}

/**
 * Writes `contents` to `file` with mode 0600 inside an owner-only (0700) directory.
 *
 * The data goes to a temporary file created with mode 0600 in the same directory, is flushed,
 * and is then renamed over `file`, so readers never see a partial file and the secret is never
 * readable by others, even for a moment, whatever the previous mode of `file` or the umask.
 */
export async function writeSecretFile(file: string, contents: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  await ensureOwnerOnlyDir(dir);
  const temporary = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(temporary, 'wx', SECRET_FILE_MODE);
  try {
    try {
      await handle.chmod(SECRET_FILE_MODE);
      await handle.writeFile(contents);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
}
