export * from './scopes';
export * from './constant-time';
export * from './api-keys';
export * from './jwt';
export * from './actors';
export * from './middleware';
