import { createHash } from 'node:crypto';
import { parseDatabaseUrl, quoteIdentifier, withAdminClient } from '@svc/db-kit';
import { PreflightError } from './preflight';

/** What the stack writes as the comment of each database it runs on; the digest ends it. */
const MARK_PREFIX = 'svc development stack, secrets ';

/**
 * The comment that ties a development database to the encryption keys sealing the secrets in it: 16 hex digits
 * of their SHA-256, which names the keys without revealing them.
 */
export function secretsMark(encryptionKeys: string): string {
  return `${MARK_PREFIX}${createHash('sha256').update(encryptionKeys).digest('hex').slice(0, 16)}`;
}

/**
 * Fails with one line, before anything starts, when a database of the stack exists and was set up with other
 * secrets than `secretsFile` holds: by another checkout on this machine, or before `.svc/` was removed. The hub
 * could not unseal its signing keys and would stop with an error about encryption keys. A database without the
 * stack's comment (created before it was written, or by hand) is left to the services.
 */
export async function checkDatabaseSecrets(
  serverUrl: string,
  databases: readonly string[],
  mark: string,
  secretsFile: string,
): Promise<void> {
  const rows = await withAdminClient(serverUrl, async (client) => {
    const result = await client.query<{ datname: string; comment: string | null }>(
      `SELECT datname, shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = ANY($1)`,
      [databases],
    );
    return result.rows;
  });
  const others = rows
    .filter((row) => row.comment?.startsWith(MARK_PREFIX) && row.comment !== mark)
    .map((row) => row.datname);
  if (others.length === 0) return;
  const server = parseDatabaseUrl(serverUrl);
  const dropdb = `dropdb -h ${server.host || '127.0.0.1'} -p ${server.port} -U ${server.user || 'postgres'}`;
  throw new PreflightError(
    `The databases ${others.join(', ')} were set up with other secrets than ${secretsFile} ` +
      '(by another checkout on this machine, or before .svc/ was removed), so the hub could not open them. ' +
      'Start the stack where they were set up, set SVC_DEV_HUB_DATABASE and SVC_DEV_WORKFLOW_DATABASE to ' +
      `other names, or drop them to start afresh: ${databases.map((name) => `${dropdb} ${name}`).join(' && ')}`,
  );
}

/** Writes the stack's comment on its databases, once they run with this state directory's secrets. */
export async function markDatabaseSecrets(
  serverUrl: string,
  databases: readonly string[],
  mark: string,
): Promise<void> {
  await withAdminClient(serverUrl, async (client) => {
    for (const name of databases)
      await client.query(`COMMENT ON DATABASE ${quoteIdentifier(name)} IS ${client.escapeLiteral(mark)}`);
  });
}
