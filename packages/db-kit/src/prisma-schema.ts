import type { ExpectedModel } from './drift';

const SCALAR_TYPES: Record<string, string> = {
  String: 'text',
  Int: 'integer',
  BigInt: 'bigint',
  Float: 'double precision',
  Decimal: 'numeric',
  Boolean: 'boolean',
  DateTime: 'timestamp without time zone',
  Json: 'jsonb',
  Bytes: 'bytea',
};

/** Native type attributes (`@db.X`) that change the column type Prisma creates. */
const NATIVE_TYPES: Record<string, string> = {
  Timestamptz: 'timestamp with time zone',
  Timestamp: 'timestamp without time zone',
  Date: 'date',
  Uuid: 'uuid',
  VarChar: 'character varying',
  Char: 'character',
  Text: 'text',
  SmallInt: 'smallint',
  Integer: 'integer',
  BigInt: 'bigint',
  DoublePrecision: 'double precision',
  Real: 'real',
  JsonB: 'jsonb',
  Json: 'json',
  Citext: 'citext',
};

function stripComment(line: string): string {
  const index = line.indexOf('//');
  return (index >= 0 ? line.slice(0, index) : line).trim();
}

function blocks(schema: string, keyword: 'model' | 'enum'): { name: string; lines: string[] }[] {
  const out: { name: string; lines: string[] }[] = [];
  const pattern = new RegExp(`^\\s*${keyword}\\s+(\\w+)\\s*\\{([\\s\\S]*?)^\\s*\\}`, 'gm');
  for (const match of schema.matchAll(pattern)) {
    out.push({
      name: match[1] as string,
      lines: (match[2] as string).split('\n').map(stripComment).filter(Boolean),
    });
  }
  return out;
}

/**
 * The tables and columns a Prisma schema describes, in the shape {@link compareModels} takes: table names from
 * `@@map`, column names from `@map`, nullability from `?` (scalar lists are nullable, as Prisma creates them),
 * types from the scalar type or its `@db.` attribute; relation fields and `@ignore`d models/fields are skipped.
 */
export function expectedModelsFromPrismaSchema(schema: string): ExpectedModel[] {
  const models = blocks(schema, 'model');
  const modelNames = new Set(models.map((m) => m.name));
  const enumNames = new Set(blocks(schema, 'enum').map((e) => e.name));
  const expected: ExpectedModel[] = [];
  for (const model of models) {
    if (model.lines.some((line) => line.startsWith('@@ignore'))) continue;
    const tableMap = model.lines.map((line) => /^@@map\("([^"]+)"\)/.exec(line)).find(Boolean);
    const columns: ExpectedModel['columns'] = [];
    for (const line of model.lines) {
      if (line.startsWith('@@')) continue;
      const field = /^(\w+)\s+(\w+)(\[\])?(\?)?(.*)$/.exec(line);
      if (!field) continue;
      const [, name = '', type = '', list, optional, rest = ''] = field;
      if (modelNames.has(type) || rest.includes('@ignore') || rest.includes('@relation')) continue;
      const mapped = /@map\("([^"]+)"\)/.exec(rest)?.[1];
      const native = /@db\.(\w+)/.exec(rest)?.[1];
      const base = enumNames.has(type)
        ? type
        : (native && NATIVE_TYPES[native]) || SCALAR_TYPES[type] || type;
      columns.push({
        name: mapped ?? name,
        nullable: Boolean(optional) || Boolean(list),
        dbType: list ? `${base}[]` : base,
      });
    }
    expected.push({ table: tableMap?.[1] ?? model.name, columns });
  }
  return expected;
}
