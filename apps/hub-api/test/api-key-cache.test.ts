import { generateApiKey } from '@svc/auth';
import { ApiKeyCache, API_KEY_CACHE_TTL_MS } from '../src/auth/api-key-cache';
import type { Db } from '../src/db';
import { createKey, startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

let t: TestHub;
let owner: SeededMember;
beforeAll(async () => {
  t = await startTestHub();
  owner = await t.seedMember('owner');
}, 30_000);
afterAll(() => t.close());

/** The real database, with the key reads and last-use writes counted. */
function countingDb(options: { beforeRead?: () => Promise<void> } = {}) {
  const prisma = t.database.prisma;
  const counts = { reads: 0, writes: 0 };
  const db = {
    apiKey: {
      async findUnique(args: Parameters<typeof prisma.apiKey.findUnique>[0]) {
        counts.reads += 1;
        await options.beforeRead?.();
        return prisma.apiKey.findUnique(args);
      },
      async update(args: Parameters<typeof prisma.apiKey.update>[0]) {
        counts.writes += 1;
        return prisma.apiKey.update(args);
      },
    },
  } as unknown as Db;
  return { db, counts };
}

function clock(start = Date.now()) {
  let ms = start;
  return { now: () => new Date(ms), advance: (by: number) => (ms += by) };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('API-key cache', () => {
  test('when a key is used repeatedly within the cache time, then its row is read once and a wrong secret is still refused', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const { db, counts } = countingDb();
    const cache = new ApiKeyCache({ db });
    for (let i = 0; i < 5; i += 1) {
      await expect(cache.authenticate(key.key)).resolves.toMatchObject({
        id: key.id,
        workspaceId: owner.workspace.id,
        scopes: ['workspaces:read'],
      });
    }
    expect(counts.reads).toBe(1);
    const forged = `${key.key.slice(0, -4)}${key.key.endsWith('AAAA') ? 'QQQQ' : 'AAAA'}`;
    await expect(cache.authenticate(forged)).resolves.toBeNull();
    await expect(cache.authenticate('svc_not-a-key')).resolves.toBeNull();
    expect(counts.reads).toBe(1);
  });

  test('when many requests miss at once, then they share one database read', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const { db, counts } = countingDb();
    const cache = new ApiKeyCache({ db });
    const results = await Promise.all(Array.from({ length: 20 }, () => cache.authenticate(key.key)));
    expect(results.every((r) => r?.id === key.id)).toBe(true);
    expect(counts.reads).toBe(1);
  });

  test('when a key is revoked on the replica, then it is refused at once; another replica refuses it once its cache time has passed', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const api = t.client({ apiKey: key.key });
    expect((await api.GET('/api/v1/workspaces')).response.status).toBe(200);
    // Another replica: same database, its own cache and clock.
    const time = clock();
    const other = new ApiKeyCache({ db: t.database.prisma, now: time.now });
    await expect(other.authenticate(key.key)).resolves.not.toBeNull();

    await t.client({ token: owner.token }).DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
      params: { path: { workspace: owner.workspace.slug, keyId: key.id } },
    });
    expect((await api.GET('/api/v1/workspaces')).response.status).toBe(401);

    time.advance(API_KEY_CACHE_TTL_MS - 1);
    await expect(other.authenticate(key.key)).resolves.not.toBeNull();
    time.advance(1);
    await expect(other.authenticate(key.key)).resolves.toBeNull();
  });

  test('when a cached key reaches its expiry, then it is refused without waiting for the cache', async () => {
    const time = clock();
    const key = await createKey(t, owner, {
      scopes: ['workspaces:read'],
      expires_at: new Date(time.now().getTime() + 5_000).toISOString(),
    });
    const { db, counts } = countingDb();
    const cache = new ApiKeyCache({ db, now: time.now });
    await expect(cache.authenticate(key.key)).resolves.not.toBeNull();
    time.advance(5_000);
    await expect(cache.authenticate(key.key)).resolves.toBeNull();
    expect(counts.reads).toBe(1);
  });

  test('when a key is used often, then its last use is written at most once a minute', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const time = clock();
    const { db, counts } = countingDb();
    const cache = new ApiKeyCache({ db, now: time.now });
    for (let i = 0; i < 5; i += 1) await cache.authenticate(key.key);
    await flush();
    expect(counts.writes).toBe(1);
    const row = await t.database.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    expect(row.lastUsedAt?.getTime()).toBe(time.now().getTime());
    time.advance(30_000);
    await cache.authenticate(key.key);
    await flush();
    expect(counts.writes).toBe(1);
    time.advance(31_000);
    await cache.authenticate(key.key);
    await flush();
    expect(counts.writes).toBe(2);
  });

  test('when a key is invalidated while its row is being read, then that read is not kept', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    let release: () => void = () => undefined;
    let hold = true;
    const { db, counts } = countingDb({
      beforeRead: () => (hold ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve()),
    });
    const cache = new ApiKeyCache({ db });
    const pending = cache.authenticate(key.key);
    await flush();
    cache.invalidate(key.id);
    hold = false;
    release();
    await pending;
    expect(cache.size).toBe(0);
    await cache.authenticate(key.key);
    expect(counts.reads).toBe(2);
    expect(cache.size).toBe(1);
  });

  test('when a key is cached, then its workspace comes with it, for that key only and only while fresh', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const other = await createKey(t, owner, { scopes: ['workspaces:read'] });
    const time = clock();
    const cache = new ApiKeyCache({ db: t.database.prisma, now: time.now });
    const record = await cache.authenticate(key.key);
    const actor = {
      kind: 'api_key' as const,
      keyId: key.id,
      workspaceId: owner.workspace.id,
      scopes: [],
      prefix: key.prefix,
    };
    expect(record?.id).toBe(key.id);
    expect(cache.workspaceOf(actor)).toMatchObject({ id: owner.workspace.id, slug: owner.workspace.slug });
    expect(cache.workspaceOf({ ...actor, keyId: other.id })).toBeUndefined();
    expect(cache.workspaceOf({ ...actor, prefix: other.prefix, keyId: other.id })).toBeUndefined();
    time.advance(API_KEY_CACHE_TTL_MS);
    expect(cache.workspaceOf(actor)).toBeUndefined();
  });

  test('when an API key calls workspace routes by slug or id, then it is authorized against its own workspace only', async () => {
    const key = await createKey(t, owner, { scopes: ['workspaces:read', 'projects:read'] });
    const stranger = await t.seedMember('owner');
    const api = t.client({ apiKey: key.key });
    for (let i = 0; i < 2; i += 1) {
      for (const workspace of [owner.workspace.slug, owner.workspace.id]) {
        const res = await api.GET('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace } },
        });
        expect(res.response.status).toBe(200);
      }
      for (const workspace of [stranger.workspace.slug, stranger.workspace.id]) {
        const res = await api.GET('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace } },
        });
        expect({ status: res.response.status, code: res.error?.code }).toEqual({
          status: 403,
          code: 'workspace_forbidden',
        });
      }
    }
    const listed = await api.GET('/api/v1/workspaces');
    expect(listed.data?.data).toEqual([
      expect.objectContaining({ id: owner.workspace.id, slug: owner.workspace.slug }),
    ]);
  });

  test('when unknown keys are presented, then nothing is cached; the cache holds at most its bound', async () => {
    const { db, counts } = countingDb();
    const cache = new ApiKeyCache({ db, maxEntries: 2 });
    const unknown = generateApiKey().key;
    await expect(cache.authenticate(unknown)).resolves.toBeNull();
    await expect(cache.authenticate(unknown)).resolves.toBeNull();
    expect(counts.reads).toBe(2);
    expect(cache.size).toBe(0);
    for (let i = 0; i < 3; i += 1) {
      const key = await createKey(t, owner, { scopes: ['workspaces:read'] });
      await expect(cache.authenticate(key.key)).resolves.not.toBeNull();
    }
    expect(cache.size).toBe(2);
  });
});
