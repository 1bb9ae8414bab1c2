import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
// @svc/testing depends on this package, so its test servers are read from its source, not through a dependency.
import { testDatabaseServerUrl } from '../../testing/src/servers';
import { withDatabase } from './connection';
import { dropDatabase, ensureDatabase } from './databases';
import type { DatabaseColumns, ExpectedModel } from './drift';
import { compareModels, normalizeType, readDatabaseColumns } from './drift';

jest.setTimeout(30_000);

const SERVER = testDatabaseServerUrl();
const name = `dbkit_drift_${randomBytes(5).toString('hex')}`;
const url = withDatabase(SERVER, name);

beforeAll(async () => {
  await ensureDatabase(SERVER, name);
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(`
    CREATE TYPE "Role" AS ENUM ('ADMIN', 'MEMBER');
    CREATE TABLE "User" (
      id TEXT PRIMARY KEY,
      email VARCHAR(255) NOT NULL,
      role "Role" NOT NULL DEFAULT 'MEMBER',
      tags TEXT[] NOT NULL,
      "createdAt" TIMESTAMP(3) NOT NULL,
      "deletedAt" TIMESTAMPTZ
    );
    CREATE TABLE "Empty" ();
    CREATE VIEW "UserView" AS SELECT id FROM "User";
    CREATE TABLE _prisma_migrations (id VARCHAR(36) PRIMARY KEY);
    CREATE SCHEMA other;
    CREATE TABLE other."Elsewhere" (id INTEGER);
  `);
  await client.end();
});

afterAll(async () => {
  await dropDatabase(SERVER, name, { force: true });
});

const columns = (entries: Record<string, [string, boolean]>) =>
  new Map(
    Object.entries(entries).map(([column, [dataType, isNullable]]) => [column, { dataType, isNullable }]),
  );

describe('readDatabaseColumns', () => {
  it('when reading public, then base tables and their columns are returned without views or _prisma_migrations', async () => {
    const actual = await readDatabaseColumns(url);

    expect(actual).toEqual(
      new Map([
        ['Empty', new Map()],
        [
          'User',
          columns({
            id: ['text', false],
            email: ['character varying', false],
            role: ['Role', false],
            tags: ['text[]', false],
            createdAt: ['timestamp without time zone', false],
            deletedAt: ['timestamp with time zone', true],
          }),
        ],
      ]),
    );
  });

  it('when reading another schema, then only its tables are returned', async () => {
    expect(await readDatabaseColumns(url, 'other')).toEqual(
      new Map([['Elsewhere', columns({ id: ['integer', true] })]]),
    );
  });
});

describe('compareModels', () => {
  const actual: DatabaseColumns = new Map([
    [
      'User',
      columns({ id: ['text', false], email: ['character varying', false], legacy: ['integer', true] }),
    ],
    ['Audit', columns({ id: ['bigint', false] })],
  ]);

  it('when the model matches the database, then there are no differences', () => {
    const expected: ExpectedModel[] = [
      {
        table: 'User',
        columns: [
          { name: 'id', nullable: false, dbType: 'text' },
          { name: 'email', nullable: false, dbType: 'VarChar(255)' },
          { name: 'legacy', nullable: true },
        ],
      },
      { table: 'Audit', columns: [{ name: 'id', nullable: false, dbType: 'BigInt' }] },
    ];
    expect(compareModels(expected, actual)).toEqual([]);
  });

  it('when they differ, then every kind of difference is reported, sorted by table', () => {
    const expected: ExpectedModel[] = [
      {
        table: 'User',
        columns: [
          { name: 'id', nullable: false, dbType: 'uuid' },
          { name: 'email', nullable: true },
          { name: 'name', nullable: true },
        ],
      },
      { table: 'Project', columns: [{ name: 'id', nullable: false }] },
    ];

    expect(compareModels(expected, actual)).toEqual([
      'extra table "Audit"',
      'missing table "Project"',
      'missing column "User"."name"',
      'extra column "User"."legacy"',
      'nullability mismatch on "User"."email": model NULL, database NOT NULL',
      'type mismatch on "User"."id": model uuid, database text',
    ]);
  });

  it('when the database read back from Postgres is compared, then table names are case-sensitive', async () => {
    const actualFromDb = await readDatabaseColumns(url);
    expect(compareModels([{ table: 'empty', columns: [] }], actualFromDb)).toEqual([
      'extra table "Empty"',
      'extra table "User"',
      'missing table "empty"',
    ]);
  });
});

describe('normalizeType', () => {
  it.each([
    ['VarChar(255)', 'character varying'],
    ['Timestamptz(6)', 'timestamp with time zone'],
    ['Timestamp(3)', 'timestamp without time zone'],
    ['int4', 'integer'],
    ['Decimal(10, 2)', 'numeric'],
    ['Text[]', 'text[]'],
    ['Role', 'role'],
  ])('when normalising %j, then it becomes %j', (input, output) => {
    expect(normalizeType(input)).toBe(output);
  });
});
