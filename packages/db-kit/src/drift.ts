import { Client } from 'pg';
import { clientConfig } from './connection';
import { PRISMA_MIGRATIONS_TABLE } from './migrator';

export interface DatabaseColumn {
  /**
   * information_schema `data_type` (e.g. `text`, `timestamp with time zone`); for enums and other user-defined
   * types the type name (`udt_name`); for arrays the element type followed by `[]`.
   */
  dataType: string;
  isNullable: boolean;
}

/** table name → column name → column. */
export type DatabaseColumns = Map<string, Map<string, DatabaseColumn>>;

export interface ExpectedModel {
  table: string;
  columns: { name: string; nullable: boolean; dbType?: string }[];
}

interface ColumnRow {
  table_name: string;
  column_name: string;
  data_type: string;
  udt_name: string;
  is_nullable: 'YES' | 'NO';
}

function columnType(row: ColumnRow): string {
  if (row.data_type === 'USER-DEFINED') return row.udt_name;
  if (row.data_type === 'ARRAY') return `${normalizeType(row.udt_name.replace(/^_/, ''))}[]`;
  return row.data_type;
}

/**
 * Reads the columns of every base table in `schema` (default `public`), except Prisma's `_prisma_migrations`.
 * Tables without columns still appear, with an empty map.
 */
export async function readDatabaseColumns(databaseUrl: string, schema = 'public'): Promise<DatabaseColumns> {
  const client = new Client({ ...clientConfig(databaseUrl), application_name: 'svc-db-kit-drift' });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables
        where table_schema = $1 and table_type = 'BASE TABLE' and table_name <> $2
        order by table_name`,
      [schema, PRISMA_MIGRATIONS_TABLE],
    );
    const columns = await client.query<ColumnRow>(
      `select c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable
         from information_schema.columns c
         join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where c.table_schema = $1 and t.table_type = 'BASE TABLE' and c.table_name <> $2
        order by c.table_name, c.ordinal_position`,
      [schema, PRISMA_MIGRATIONS_TABLE],
    );
    const result: DatabaseColumns = new Map(tables.rows.map((row) => [row.table_name, new Map()]));
    for (const row of columns.rows) {
      let table = result.get(row.table_name);
      if (table === undefined) {
        table = new Map();
        result.set(row.table_name, table);
      }
      table.set(row.column_name, { dataType: columnType(row), isNullable: row.is_nullable === 'YES' });
    }
    return result;
  } finally {
    await client.end();
  }
}

/** Spellings of one Postgres type, reduced to one name (the information_schema `data_type` where there is one). */
const TYPE_ALIASES: Record<string, string> = {
  int: 'integer',
  int4: 'integer',
  integer: 'integer',
  serial: 'integer',
  serial4: 'integer',
  int2: 'smallint',
  smallint: 'smallint',
  smallserial: 'smallint',
  int8: 'bigint',
  bigint: 'bigint',
  bigserial: 'bigint',
  serial8: 'bigint',
  float4: 'real',
  real: 'real',
  float8: 'double precision',
  'double precision': 'double precision',
  decimal: 'numeric',
  numeric: 'numeric',
  bool: 'boolean',
  boolean: 'boolean',
  varchar: 'character varying',
  'character varying': 'character varying',
  char: 'character',
  character: 'character',
  bpchar: 'character',
  text: 'text',
  citext: 'citext',
  uuid: 'uuid',
  json: 'json',
  jsonb: 'jsonb',
  bytea: 'bytea',
  date: 'date',
  timestamp: 'timestamp without time zone',
  'timestamp without time zone': 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  'timestamp with time zone': 'timestamp with time zone',
  time: 'time without time zone',
  'time without time zone': 'time without time zone',
  timetz: 'time with time zone',
  'time with time zone': 'time with time zone',
  inet: 'inet',
  xml: 'xml',
  money: 'money',
  bit: 'bit',
  varbit: 'bit varying',
  'bit varying': 'bit varying',
  oid: 'oid',
};

/**
 * Canonical form of a type name for comparison: case-insensitive, length/precision dropped (`VarChar(255)` →
 * `character varying`, `Timestamptz(6)` → `timestamp with time zone`), aliases resolved (`int4` → `integer`).
 * Unknown names (enums, extensions) are kept as written, lower-cased.
 */
export function normalizeType(type: string): string {
  const isArray = /\[\]\s*$/.test(type);
  const base = type
    .replace(/\[\]\s*$/, '')
    .replace(/\([^)]*\)/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
  const canonical = TYPE_ALIASES[base] ?? base;
  return isArray ? `${canonical}[]` : canonical;
}

/**
 * Differences between the tables/columns a model expects and the database's actual columns, as human-readable
 * lines, sorted by table: missing/extra tables, missing/extra columns, nullability mismatches and, where the
 * expected column names a `dbType`, type mismatches (compared with {@link normalizeType}). Empty when they agree.
 */
export function compareModels(expected: ExpectedModel[], actual: DatabaseColumns): string[] {
  const differences: { table: string; order: number; text: string }[] = [];
  const expectedTables = new Set(expected.map((model) => model.table));

  for (const model of expected) {
    const table = actual.get(model.table);
    if (table === undefined) {
      differences.push({ table: model.table, order: 0, text: `missing table "${model.table}"` });
      continue;
    }
    const expectedColumns = new Set(model.columns.map((column) => column.name));
    for (const column of model.columns) {
      const found = table.get(column.name);
      const where = `"${model.table}"."${column.name}"`;
      if (found === undefined) {
        differences.push({ table: model.table, order: 1, text: `missing column ${where}` });
        continue;
      }
      if (found.isNullable !== column.nullable) {
        differences.push({
          table: model.table,
          order: 3,
          text: `nullability mismatch on ${where}: model ${column.nullable ? 'NULL' : 'NOT NULL'}, database ${
            found.isNullable ? 'NULL' : 'NOT NULL'
          }`,
        });
      }
      if (column.dbType !== undefined && normalizeType(column.dbType) !== normalizeType(found.dataType)) {
        differences.push({
          table: model.table,
          order: 4,
          text: `type mismatch on ${where}: model ${column.dbType}, database ${found.dataType}`,
        });
      }
    }
    for (const name of table.keys()) {
      if (!expectedColumns.has(name)) {
        differences.push({ table: model.table, order: 2, text: `extra column "${model.table}"."${name}"` });
      }
    }
  }
  for (const name of actual.keys()) {
    if (!expectedTables.has(name)) differences.push({ table: name, order: 0, text: `extra table "${name}"` });
  }

  return differences
    .sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : a.order - b.order))
    .map((difference) => difference.text);
}
