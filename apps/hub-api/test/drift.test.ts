import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { compareModels, expectedModelsFromPrismaSchema, readDatabaseColumns } from '@svc/db-kit';
import { createTestDatabase } from '@svc/testing';
import { MIGRATIONS_DIR } from '../src/app';

test('when the migrations are applied, then the tables match the Prisma models exactly', async () => {
  const db = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_hub' });
  try {
    const folder = path.join(__dirname, '..', 'prisma', 'schema');
    const schema = readdirSync(folder)
      .filter((f) => f.endsWith('.prisma'))
      .map((f) => readFileSync(path.join(folder, f), 'utf8'))
      .join('\n');
    const expected = expectedModelsFromPrismaSchema(schema);
    expect(expected.length).toBeGreaterThan(5);
    expect(compareModels(expected, await readDatabaseColumns(db.url))).toEqual([]);
  } finally {
    await db.drop();
  }
});
