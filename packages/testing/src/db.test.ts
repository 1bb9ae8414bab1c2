import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { databaseExists, dropDatabase, ensureDatabase, withAdminClient } from '@svc/db-kit';
import { createTestDatabase, dropStaleTestDatabases, templateDatabaseName } from './db';
import { testDatabaseServerUrl } from './servers';

jest.setTimeout(60_000);

const SERVER = testDatabaseServerUrl();
const PREFIX = `tst_${randomBytes(4).toString('hex')}`;
const dirs: string[] = [];

async function databasesWithPrefix(
  prefix: string,
): Promise<{ datname: string; oid: number; datistemplate: boolean }[]> {
  const rows = await withAdminClient(SERVER, (client) =>
    client.query<{ datname: string; oid: number; datistemplate: boolean }>(
      `select datname, oid::int as oid, datistemplate from pg_database where starts_with(datname, $1) order by datname`,
      [`${prefix}_`],
    ),
  );
  return rows.rows;
}

afterAll(async () => {
  for (const db of await databasesWithPrefix(PREFIX)) await dropDatabase(SERVER, db.datname, { force: true });
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function migrationsDir(migrations: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'testing-migrations-'));
  dirs.push(dir);
  await writeFile(join(dir, 'migration_lock.toml'), 'provider = "postgresql"\n');
  for (const [name, sql] of Object.entries(migrations)) {
    await mkdir(join(dir, name));
    await writeFile(join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

async function query<T extends object>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

const ITEMS = { '20250101000000_init': 'CREATE TABLE item (id SERIAL PRIMARY KEY, label TEXT NOT NULL);\n' };

describe('createTestDatabase', () => {
  it('when two databases are created, then each is migrated and isolated from the other', async () => {
    const dir = await migrationsDir(ITEMS);
    const a = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix: `${PREFIX}_iso` });
    const b = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix: `${PREFIX}_iso` });

    expect(a.name).toMatch(new RegExp(`^${PREFIX}_iso_t_\\d{10}_[0-9a-f]{8}$`));
    expect(a.name).not.toBe(b.name);
    expect(a.url).toBe(`postgresql://postgres@127.0.0.1:5432/${a.name}`);
    await query(a.url, "insert into item (label) values ('only in a')");
    expect(await query(a.url, 'select label from item')).toEqual([{ label: 'only in a' }]);
    expect(await query(b.url, 'select label from item')).toEqual([]);
    expect(await query(b.url, 'select migration_name from _prisma_migrations')).toEqual([
      { migration_name: '20250101000000_init' },
    ]);
    await a.drop();
    await b.drop();
  });

  it('when called again with the same migrations, then the template is reused instead of rebuilt', async () => {
    const prefix = `${PREFIX}_reuse`;
    const dir = await migrationsDir(ITEMS);
    const first = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });
    const templateBefore = (await databasesWithPrefix(`${prefix}_tpl`))[0];

    const second = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });

    const templates = await databasesWithPrefix(`${prefix}_tpl`);
    expect(templates).toEqual([templateBefore]);
    expect(templates[0]).toMatchObject({
      datname: await templateDatabaseName(prefix, dir),
      datistemplate: true,
    });
    // A rebuild would have recorded the migration under a new random id.
    const ids = async (url: string) => query<{ id: string }>(url, 'select id from _prisma_migrations');
    expect(await ids(second.url)).toEqual(await ids(first.url));
    await first.drop();
    await second.drop();
  });

  it('when many workers ask at once for a new migrations content, then one template is built and every clone works', async () => {
    const prefix = `${PREFIX}_many`;
    const dir = await migrationsDir(ITEMS);

    const dbs = await Promise.all(
      Array.from({ length: 4 }, () => createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix })),
    );

    expect(await databasesWithPrefix(`${prefix}_tpl`)).toHaveLength(1);
    for (const db of dbs)
      expect(await query(db.url, 'select count(*)::int as n from item')).toEqual([{ n: 0 }]);
    await Promise.all(dbs.map((db) => db.drop()));
  });

  it('when the migrations change, then a new template named after the new content is built', async () => {
    const prefix = `${PREFIX}_change`;
    const dir = await migrationsDir(ITEMS);
    const before = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });
    const oldTemplate = await templateDatabaseName(prefix, dir);
    await mkdir(join(dir, '20250102000000_more'));
    await writeFile(
      join(dir, '20250102000000_more', 'migration.sql'),
      'ALTER TABLE item ADD COLUMN note TEXT;\n',
    );

    const after = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });

    const newTemplate = await templateDatabaseName(prefix, dir);
    expect(newTemplate).not.toBe(oldTemplate);
    expect(newTemplate).toMatch(new RegExp(`^${prefix}_tpl_[0-9a-f]{10}$`));
    expect((await databasesWithPrefix(`${prefix}_tpl`)).map((db) => db.datname).sort()).toEqual(
      [oldTemplate, newTemplate].sort(),
    );
    expect(
      await query(after.url, "select 1 from information_schema.columns where column_name = 'note'"),
    ).toHaveLength(1);
    await before.drop();
    await after.drop();
  });

  it('when a half-built template from a killed run exists, then it is dropped and rebuilt', async () => {
    const prefix = `${PREFIX}_half`;
    const dir = await migrationsDir(ITEMS);
    await ensureDatabase(SERVER, await templateDatabaseName(prefix, dir));

    const db = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });

    expect(await query(db.url, 'select count(*)::int as n from item')).toEqual([{ n: 0 }]);
    expect(await databasesWithPrefix(`${prefix}_tpl`)).toEqual([
      expect.objectContaining({ datistemplate: true }),
    ]);
    await db.drop();
  });

  it('when someone is briefly connected to the template, then cloning retries until it is free', async () => {
    const prefix = `${PREFIX}_busy`;
    const dir = await migrationsDir(ITEMS);
    const first = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });
    const template = await templateDatabaseName(prefix, dir);
    const intruder = new Client({ connectionString: first.url.replace(first.name, template) });
    await intruder.connect();
    const leave = new Promise<void>((resolve) => setTimeout(resolve, 300)).then(() => intruder.end());

    const second = await createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix });

    await leave;
    expect(await query(second.url, 'select count(*)::int as n from item')).toEqual([{ n: 0 }]);
    await first.drop();
    await second.drop();
  });

  it('when a migration fails, then it rejects and leaves no template behind', async () => {
    const prefix = `${PREFIX}_fail`;
    const dir = await migrationsDir({ '20250101000000_broken': 'SELECT 1/0;\n' });

    await expect(createTestDatabase({ serverUrl: SERVER, migrationsDir: dir, prefix })).rejects.toThrow(
      /20250101000000_broken.*division by zero/,
    );

    expect(await databasesWithPrefix(prefix)).toEqual([]);
  });

  it('when drop is called, then the database is gone, even with open connections, and a second drop is harmless', async () => {
    const db = await createTestDatabase({
      serverUrl: SERVER,
      migrationsDir: await migrationsDir(ITEMS),
      prefix: `${PREFIX}_drop`,
    });
    const open = new Client({ connectionString: db.url });
    open.on('error', () => undefined);
    await open.connect();

    await db.drop();
    await db.drop();

    expect(await databaseExists(SERVER, db.name)).toBe(false);
    await open.end().catch(() => undefined);
  });

  it.each(['Hub', '1hub', 'hub-api', '', 'h'.repeat(42)])(
    'when the prefix is %j, then it is rejected before touching the server',
    async (prefix) => {
      await expect(
        createTestDatabase({ serverUrl: SERVER, migrationsDir: await migrationsDir(ITEMS), prefix }),
      ).rejects.toThrow(/invalid test database prefix/);
    },
  );

  it('when the prefix has the longest allowed length, then names still fit in 63 characters', async () => {
    const prefix = `${PREFIX}_${'x'.repeat(41 - PREFIX.length - 1)}`;
    expect(prefix).toHaveLength(41);
    const db = await createTestDatabase({
      serverUrl: SERVER,
      migrationsDir: await migrationsDir(ITEMS),
      prefix,
    });
    expect(db.name.length).toBeLessThanOrEqual(63);
    await db.drop();
  });
});

describe('dropStaleTestDatabases', () => {
  it('when test databases are older than the limit, then only those are dropped and templates are kept', async () => {
    const prefix = `${PREFIX}_stale`;
    const fresh = await createTestDatabase({
      serverUrl: SERVER,
      migrationsDir: await migrationsDir(ITEMS),
      prefix,
    });
    const twoHoursAgo = Math.floor(Date.now() / 1000) - 2 * 3600;
    const old = `${prefix}_t_${twoHoursAgo}_deadbeef`;
    await ensureDatabase(SERVER, old);
    const unrelated = `${prefix}_other_${twoHoursAgo}`;
    await ensureDatabase(SERVER, unrelated);

    const dropped = await dropStaleTestDatabases(SERVER, prefix, 60);

    expect(dropped).toEqual([old]);
    const left = (await databasesWithPrefix(prefix)).map((db) => db.datname);
    expect(left).toContain(fresh.name);
    expect(left).toContain(unrelated);
    expect(left.some((name) => name.startsWith(`${prefix}_tpl_`))).toBe(true);
    expect(left).not.toContain(old);
  });

  it('when the prefix is invalid, then it throws', async () => {
    await expect(dropStaleTestDatabases(SERVER, 'Bad-Prefix', 60)).rejects.toThrow(
      /invalid test database prefix/,
    );
  });
});
