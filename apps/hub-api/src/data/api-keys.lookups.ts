import { parseApiKey, verifyApiKeySecret } from '@svc/auth';
import type { Logger } from '@svc/service-kit';
import { AppError } from '@svc/service-kit';
import type { Db } from '../db';

/** Last use is written at most this often per key and replica. */
export const LAST_USED_GRANULARITY_MS = 60_000;

export const apiKeyNotFound = () =>
  new AppError({ status: 404, code: 'api_key_not_found', detail: 'No such API key in this workspace.' });

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  prefix: string;
  scopes: string[];
  expiresAt: Date | null;
}

/**
 * Finds the live key a presented `svc_…` string stands for: known prefix, matching secret hash (constant
 * time), not revoked, not expired. Records last use at most once a minute per key, off the request path.
 * Always reads the database (introspection relies on that); requests to the hub itself go through the
 * `ApiKeyCache`.
 */
export async function authenticateApiKey(
  db: Db,
  raw: string,
  options: { now?: Date; logger?: Logger } = {},
): Promise<ApiKeyRecord | null> {
  const parsed = parseApiKey(raw);
  if (!parsed) return null;
  const key = await db.apiKey.findUnique({ where: { prefix: parsed.prefix } });
  if (!key || !verifyApiKeySecret(parsed.secret, key.secretHash)) return null;
  const now = options.now ?? new Date();
  if (key.revokedAt || (key.expiresAt && key.expiresAt <= now)) return null;
  if (!key.lastUsedAt || now.getTime() - key.lastUsedAt.getTime() > LAST_USED_GRANULARITY_MS) {
    db.apiKey
      .update({ where: { id: key.id }, data: { lastUsedAt: now } })
      .catch((error: unknown) =>
        options.logger?.warn({ err: error, key_id: key.id }, 'could not record key use'),
      );
  }
  return {
    id: key.id,
    workspaceId: key.workspaceId,
    prefix: key.prefix,
    scopes: key.scopes,
    expiresAt: key.expiresAt,
  };
}
