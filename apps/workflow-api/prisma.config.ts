import { defineConfig } from 'prisma/config';

// Used by the Prisma CLI (`prisma generate`, and `prisma migrate deploy` where the schema engine exists).
// At run time the service connects through @prisma/adapter-pg with DATABASE_URL from its own env schema.
export default defineConfig({
  schema: 'prisma/schema',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/svc_workflow' },
});
