import { createHash } from 'node:crypto';
import { constants as fsConstants, promises as fs } from 'node:fs';
import path from 'node:path';
import { CliError } from '../domain/cli-error';
import { ensureOwnerOnlyDir, SECRET_FILE_MODE, writeSecretFile } from './secret-files';

/**
 * Server-local provider auth (spec: provider credential modes, Limits 4–5), development and break-glass only.
 *
 * One runtime (one profile's state directory) holds ONE canonical workspace-runtime auth file,
 * `<state dir>/provider-auth/workspace-runtime-auth` (0600 in an owner-only 0700 directory), with a sidecar
 * naming its provider identity. Each agent's auth path, `<agent runtime home>/provider-auth`, is a symbolic
 * link to it; there is no worker-wide mutable auth file and no per-agent copy. A second, different provider
 * identity for the same runtime file is refused. Materializations are serialized by an exclusive lock file
 * (created with O_EXCL); a lock whose process is gone, or older than {@link STALE_LOCK_MS}, is stale and
 * taken over.
 */

export const PROVIDER_AUTH_DIR = 'provider-auth';
export const CANONICAL_AUTH_FILE = 'workspace-runtime-auth';
export const IDENTITY_FILE = 'workspace-runtime-auth.identity.json';
export const LOCK_FILE = 'materialize.lock';
export const AGENT_AUTH_LINK = 'provider-auth';
/** A lock older than this is stale even when its process id is alive (the id may have been reused). */
export const STALE_LOCK_MS = 120_000;

export interface MaterializeProviderAuthInput {
  stateDir: string;
  agentName: string;
  /** The agent's runtime home (`AGENT_RUNTIME_HOME`); the link is created inside it. */
  runtimeHome: string;
  /** Provider of the agent's model (`anthropic` of `anthropic/claude-…`). */
  provider: string;
  /** The host's provider auth file to materialize (its bytes are copied as they are). */
  sourceFile: string;
  /** How long to wait for another materialization to finish (default 10 s). */
  waitMs?: number;
}

export interface MaterializedProviderAuth {
  canonical_file: string;
  agent_auth_path: string;
  provider: string;
  /** `<provider>:sha256:<first 16 hex>` of the auth material; identifies it without revealing it. */
  identity: string;
  /** True when this call wrote the canonical file (false: it was there with the same identity). */
  written: boolean;
}

interface IdentityRecord {
  provider: string;
  identity: string;
  materialized_at: string;
}

interface LockRecord {
  pid: number;
  agent: string;
  at: string;
}

export function providerAuthDir(stateDir: string): string {
  return path.join(stateDir, PROVIDER_AUTH_DIR);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(file: string): Promise<LockRecord | undefined> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as LockRecord;
  } catch {
    return undefined;
  }
}

/** Whether a lock file was left by a process that is gone (or is too old to trust). */
export function isStaleLock(lock: LockRecord | undefined, now = Date.now()): boolean {
  if (!lock || typeof lock.pid !== 'number') return true;
  if (!processAlive(lock.pid)) return true;
  const at = Date.parse(lock.at);
  return Number.isNaN(at) || now - at > STALE_LOCK_MS;
}

/** Takes the runtime's materialization lock (O_EXCL), waiting up to `waitMs` for a live holder. */
async function acquireLock(dir: string, agentName: string, waitMs: number): Promise<() => Promise<void>> {
  const file = path.join(dir, LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const handle = await fs.open(
        file,
        fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_WRONLY,
        SECRET_FILE_MODE,
      );
      const record: LockRecord = { pid: process.pid, agent: agentName, at: new Date().toISOString() };
      await handle.writeFile(JSON.stringify(record));
      await handle.close();
      return async () => {
        await fs.rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readLock(file);
    if (isStaleLock(holder)) {
      // Taken over: the holder is gone. A racing taker loses on the next O_EXCL create.
      await fs.rm(file, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new CliError({
        code: 'provider_auth_materializing',
        message: `another agent (${holder?.agent ?? 'unknown'}, pid ${holder?.pid ?? '?'}) is being materialized in this runtime; agents are never materialized at once`,
        fix: 'retry when that start has finished',
        details: { lock_file: file },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function identityOf(provider: string, material: Buffer): string {
  return `${provider}:sha256:${createHash('sha256').update(material).digest('hex').slice(0, 16)}`;
}

/** Reads the identity of the runtime's canonical auth file, if one was materialized. */
export async function readMaterializedIdentity(stateDir: string): Promise<IdentityRecord | undefined> {
  try {
    return JSON.parse(
      await fs.readFile(path.join(providerAuthDir(stateDir), IDENTITY_FILE), 'utf8'),
    ) as IdentityRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Materializes the host's provider auth for one agent: under the lock, writes the canonical file when the
 * runtime has none (or re-applies 0600 when it holds the same identity), refuses a different identity, and
 * links the agent's auth path to it.
 */
export async function materializeProviderAuth(
  input: MaterializeProviderAuthInput,
): Promise<MaterializedProviderAuth> {
  let material: Buffer;
  try {
    material = await fs.readFile(input.sourceFile);
  } catch (error) {
    throw new CliError({
      code: 'server_local_provider_auth_source_unreadable',
      message: `the server-local provider auth file ${input.sourceFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      fix: 'set SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE to the provider auth file of this host',
    });
  }
  if (material.length === 0) {
    throw new CliError({
      code: 'server_local_provider_auth_source_unreadable',
      message: `the server-local provider auth file ${input.sourceFile} is empty`,
      fix: 'set SVC_SERVER_LOCAL_PROVIDER_AUTH_FILE to the provider auth file of this host',
    });
  }
  const identity = identityOf(input.provider, material);
  const dir = providerAuthDir(input.stateDir);
  await ensureOwnerOnlyDir(dir);
  const release = await acquireLock(dir, input.agentName, input.waitMs ?? 10_000);
  try {
    const canonical = path.join(dir, CANONICAL_AUTH_FILE);
    const existing = await readMaterializedIdentity(input.stateDir);
    let written = false;
    if (existing && existing.identity !== identity) {
      throw new CliError({
        code: 'provider_identity_conflict',
        message: `this runtime's provider auth file holds ${existing.identity}; ${input.agentName} would bring ${identity} (provider identities are never mixed in one runtime)`,
        fix: 'use the same provider identity for every server-local agent of this runtime, or stop them and remove the runtime auth file first',
        details: { existing_identity: existing.identity, requested_identity: identity },
      });
    }
    if (!existing) {
      await writeSecretFile(canonical, material);
      const record: IdentityRecord = {
        provider: input.provider,
        identity,
        materialized_at: new Date().toISOString(),
      };
      await writeSecretFile(path.join(dir, IDENTITY_FILE), `${JSON.stringify(record)}\n`);
      written = true;
    } else {
      await fs.chmod(canonical, SECRET_FILE_MODE);
    }
    await ensureOwnerOnlyDir(input.runtimeHome);
    const link = path.join(input.runtimeHome, AGENT_AUTH_LINK);
    await fs.rm(link, { force: true });
    await fs.symlink(canonical, link);
    return { canonical_file: canonical, agent_auth_path: link, provider: input.provider, identity, written };
  } finally {
    await release();
  }
}
