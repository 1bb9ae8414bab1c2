import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { CliError } from '../domain/cli-error';
import { bundleFacts } from '../domain/runtime-plan';
import type { BundleFacts } from '../domain/runtime-plan';
import { parseEnvFile } from './profile-store';
import { SECRET_FILE_MODE, writeSecretFile } from './secret-files';

/** Reads a runtime bundle's `runtime.env`; a missing or unreadable file is a named error. */
export async function readBundle(file: string): Promise<BundleFacts> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new CliError({
      code: 'bundle_unreadable',
      message: `cannot read the runtime bundle ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      fix: 'pass the path of the runtime.env file with --bundle',
    });
  }
  return bundleFacts(file, parseEnvFile(text));
}

/**
 * The console router's upstream secret for this host: generated once (32 random bytes, base64url) and kept in
 * a 0600 file, so agents' proxy keys stay the same across restarts of the runtime.
 */
export async function ensureUpstreamSecret(file: string): Promise<string> {
  try {
    const existing = (await fs.readFile(file, 'utf8')).trim();
    await fs.chmod(file, SECRET_FILE_MODE);
    if (existing.length >= 32) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32).toString('base64url');
  await writeSecretFile(file, `${secret}\n`);
  return secret;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Reads a pid file; undefined when it is missing, malformed, or its process is gone. */
export async function readLivePid(file: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  return alive(pid) && pid !== process.pid ? pid : undefined;
}

/**
 * Takes the profile's runtime lock: a pid file created exclusively (0600). A pid file of a process that is gone
 * is replaced; one of a live process refuses with `runtime_already_running`.
 */
export async function acquirePidLock(file: string, profile: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      const handle = await fs.open(file, 'wx', SECRET_FILE_MODE);
      await handle.writeFile(`${process.pid}\n`);
      await handle.close();
      return async () => {
        const pid = await fs.readFile(file, 'utf8').catch(() => '');
        if (pid.trim() === String(process.pid)) await fs.rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = await readLivePid(file);
    if (pid !== undefined) {
      throw new CliError({
        code: 'runtime_already_running',
        message: `svc runtime up already runs for profile "${profile}" (pid ${pid})`,
        fix: 'stop it first, or use it: svc internal status',
        details: { pid },
      });
    }
    await fs.rm(file, { force: true });
  }
  throw new CliError({ code: 'runtime_lock_failed', message: `could not take the runtime lock ${file}` });
}
