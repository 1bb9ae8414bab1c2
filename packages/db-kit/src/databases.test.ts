import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testDatabaseServerUrl } from '../../testing/src/servers';
import { withDatabase } from './connection';
import {
  assertDatabaseName,
  databaseExists,
  dropDatabase,
  ensureDatabase,
  quoteIdentifier,
  withAdminClient,
} from './databases';

jest.setTimeout(30_000);

const SERVER = testDatabaseServerUrl();
const created: string[] = [];

function uniqueName(label: string): string {
  const name = `dbkit_db_${label}_${randomBytes(4).toString('hex')}`;
  created.push(name);
  return name;
}

afterAll(async () => {
  for (const name of created) await dropDatabase(SERVER, name, { force: true });
});

describe('database names', () => {
  it.each(['Upper', '1abc', 'a-b', 'x"; drop database postgres; --', '', 'a'.repeat(64)])(
    'when the name is %j, then it is rejected with the rule',
    async (name) => {
      expect(() => assertDatabaseName(name)).toThrow(/invalid database name .*a-z, 0-9 and _/);
      await expect(ensureDatabase(SERVER, name)).rejects.toThrow(/invalid database name/);
      await expect(dropDatabase(SERVER, name, { force: true })).rejects.toThrow(/invalid database name/);
      await expect(databaseExists(SERVER, name)).rejects.toThrow(/invalid database name/);
    },
  );

  it('when the name has 63 allowed characters, then it is accepted', () => {
    expect(() => assertDatabaseName(`_${'a1'.repeat(31)}`)).not.toThrow();
  });

  it('when the template name is invalid, then ensureDatabase rejects before creating anything', async () => {
    const name = uniqueName('badtpl');
    await expect(ensureDatabase(SERVER, name, { template: 'Bad-Template' })).rejects.toThrow(
      /invalid database name/,
    );
    expect(await databaseExists(SERVER, name)).toBe(false);
  });

  it('when quoting an identifier, then embedded quotes are doubled', () => {
    expect(quoteIdentifier('my"db')).toBe('"my""db"');
  });
});

describe('ensureDatabase', () => {
  it('when the database is missing, then it is created once and later calls report it exists', async () => {
    const name = uniqueName('ensure');
    expect(await databaseExists(SERVER, name)).toBe(false);
    expect(await ensureDatabase(SERVER, name)).toBe(true);
    expect(await ensureDatabase(SERVER, name)).toBe(false);
    expect(await databaseExists(SERVER, name)).toBe(true);
  });

  it('when five processes race to create the same database, then all succeed and exactly one created it', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(Array.from({ length: 5 }, () => ensureDatabase(SERVER, name)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await databaseExists(SERVER, name)).toBe(true);
  });

  it('when a template is given, then the new database is a copy of it', async () => {
    const template = uniqueName('tpl');
    await ensureDatabase(SERVER, template);
    const seed = new Client({ connectionString: withDatabase(SERVER, template) });
    await seed.connect();
    await seed.query("create table seeded (v text); insert into seeded values ('from template')");
    await seed.end();

    const clone = uniqueName('clone');
    expect(await ensureDatabase(SERVER, clone, { template })).toBe(true);
    const reader = new Client({ connectionString: withDatabase(SERVER, clone) });
    await reader.connect();
    const rows = await reader.query('select v from seeded');
    await reader.end();
    expect(rows.rows).toEqual([{ v: 'from template' }]);
  });
});

describe('dropDatabase', () => {
  it('when sessions are connected and force is set, then they are terminated and the database dropped', async () => {
    const name = uniqueName('force');
    await ensureDatabase(SERVER, name);
    const session = new Client({ connectionString: withDatabase(SERVER, name) });
    session.on('error', () => undefined);
    await session.connect();

    await dropDatabase(SERVER, name, { force: true });

    expect(await databaseExists(SERVER, name)).toBe(false);
    await expect(session.query('select 1')).rejects.toThrow();
    await session.end().catch(() => undefined);
  });

  it('when the database does not exist, then it resolves', async () => {
    await expect(dropDatabase(SERVER, uniqueName('absent'), { force: true })).resolves.toBeUndefined();
  });

  it('when the database is marked IS_TEMPLATE, then it is unmarked and dropped', async () => {
    const name = uniqueName('marked');
    await ensureDatabase(SERVER, name);
    await withAdminClient(SERVER, (client) => client.query(`ALTER DATABASE ${name} IS_TEMPLATE true`));

    await dropDatabase(SERVER, name, { force: true });

    expect(await databaseExists(SERVER, name)).toBe(false);
  });
});
