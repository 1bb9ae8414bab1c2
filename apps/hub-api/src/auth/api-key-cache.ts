import { parseApiKey, verifyApiKeySecret } from '@svc/auth';
import type { ApiKeyActor } from '@svc/auth';
import type { Logger } from '@svc/service-kit';
import type { Db } from '../db';
import type { Workspace } from '../generated/prisma/client';
import { LAST_USED_GRANULARITY_MS } from '../data/api-keys.lookups';
import type { ApiKeyRecord } from '../data/api-keys.lookups';

/**
 * How long a replica trusts a key row it has read. A key revoked on another replica stops working here
 * within this time; on the replica that revoked it, at once (see `invalidate`).
 */
export const API_KEY_CACHE_TTL_MS = 10_000;
/** Keys held at most; the oldest entry goes first. Only keys that exist are cached. */
export const API_KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * What authorizing a presented key needs from its row (never the secret, only its hash), and the key's
 * workspace, read in the same query: every request with the key is authorized against that workspace.
 */
interface KeyRow {
  id: string;
  workspaceId: string;
  prefix: string;
  secretHash: string;
  scopes: string[];
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  workspace: Workspace;
}

interface Entry {
  row: KeyRow;
  loadedAtMs: number;
}

export interface ApiKeyCacheOptions {
  db: Db;
  logger?: Logger;
  ttlMs?: number;
  maxEntries?: number;
  now?: () => Date;
}

/**
 * The hub's own API-key check with a short per-process cache of key rows, keyed by the public prefix.
 * Each request still verifies the presented secret against the cached hash (constant time) and the
 * cached row's revocation and expiry, so a cache hit never accepts anything the database would refuse,
 * except a revocation made on another replica during the last `ttlMs`. Concurrent misses for one prefix
 * share one database read. Unknown prefixes are not cached, so random keys cannot fill the memory.
 * The key's workspace comes with the row (`workspaceOf`), so authorizing an API-key request against its
 * workspace needs no further read.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<KeyRow | null>>();
  /** Bumped by every invalidation; a read that started before one is used once but not cached. */
  private epoch = 0;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => Date;

  constructor(private readonly options: ApiKeyCacheOptions) {
    this.ttlMs = options.ttlMs ?? API_KEY_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? API_KEY_CACHE_MAX_ENTRIES;
    this.now = options.now ?? (() => new Date());
  }

  /** The live key a presented `svc_…` string stands for, or null (unknown, wrong secret, revoked, expired). */
  async authenticate(raw: string): Promise<ApiKeyRecord | null> {
    const parsed = parseApiKey(raw);
    if (!parsed) return null;
    const row = await this.rowFor(parsed.prefix);
    if (!row || !verifyApiKeySecret(parsed.secret, row.secretHash)) return null;
    const now = this.now();
    if (row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
    this.recordUse(row, now);
    return {
      id: row.id,
      workspaceId: row.workspaceId,
      prefix: row.prefix,
      scopes: row.scopes,
      expiresAt: row.expiresAt,
    };
  }

  /**
   * The workspace of an API-key actor as read with its key row, while that row is cached; undefined
   * otherwise (the caller then reads the database).
   */
  workspaceOf(actor: ApiKeyActor): Workspace | undefined {
    const entry = this.entries.get(actor.prefix);
    if (!entry || entry.row.id !== actor.keyId) return undefined;
    if (this.now().getTime() - entry.loadedAtMs >= this.ttlMs) return undefined;
    return entry.row.workspace;
  }

  /** Forgets a key at once (call after the change is committed, e.g. on revocation). */
  invalidate(keyId: string): void {
    this.epoch += 1;
    for (const [prefix, entry] of this.entries) {
      if (entry.row.id === keyId) this.entries.delete(prefix);
    }
  }

  /** Forgets every key. */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private async rowFor(prefix: string): Promise<KeyRow | null> {
    const nowMs = this.now().getTime();
    const cached = this.entries.get(prefix);
    if (cached && nowMs - cached.loadedAtMs < this.ttlMs) return cached.row;
    const pending = this.loading.get(prefix);
    if (pending) return pending;
    const load = this.load(prefix, nowMs).finally(() => this.loading.delete(prefix));
    this.loading.set(prefix, load);
    return load;
  }

  private async load(prefix: string, startedAtMs: number): Promise<KeyRow | null> {
    const epoch = this.epoch;
    const row = await this.options.db.apiKey.findUnique({
      where: { prefix },
      select: {
        id: true,
        workspaceId: true,
        prefix: true,
        secretHash: true,
        scopes: true,
        expiresAt: true,
        revokedAt: true,
        lastUsedAt: true,
        workspace: true,
      },
    });
    this.entries.delete(prefix);
    if (row && epoch === this.epoch) {
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(prefix, { row, loadedAtMs: startedAtMs });
    }
    return row;
  }

  /** Last use, at most once a minute per key on this replica, off the request path. */
  private recordUse(row: KeyRow, now: Date): void {
    if (row.lastUsedAt && now.getTime() - row.lastUsedAt.getTime() <= LAST_USED_GRANULARITY_MS) return;
    row.lastUsedAt = now;
    this.options.db.apiKey
      .update({ where: { id: row.id }, data: { lastUsedAt: now } })
      .catch((error: unknown) =>
        this.options.logger?.warn({ err: error, key_id: row.id }, 'could not record key use'),
      );
  }
}
