export * from './schema-arbitrary';
export * from './validator';
export * from './operation-fuzz';
export * from './run';
