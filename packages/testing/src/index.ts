export { createTestDatabase, dropStaleTestDatabases, templateDatabaseName } from './db';
export type { CreateTestDatabaseOptions, TestDatabase } from './db';
export * from './process';
