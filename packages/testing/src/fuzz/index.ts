export * from './schema-arbitrary';
export * from './validator';
export * from './operation-fuzz';
export * from './pipeline-checks';
export * from './run';
