/**
 * The kit for a process that only serves HTTP: errors, logging, configuration, the entry point, the HTTP app,
 * operations, health and the server, without the queue, Redis and database modules of the full entry point
 * (BullMQ, ioredis and pg take about 20 MB of memory at start). The console router uses it: it keeps up to
 * 10 000 routes in a process meant to stay small.
 */
export * from './errors';
export * from './secrets';
export * from './logger';
export * from './env';
export * from './main';
export * from './request-id';
export * from './http-app';
export * from './operation-router';
export * from './health';
export * from './server';
export * from './metrics';
export * from './metrics-http';
export * from './metrics-listener';
export * from './tracing';
export * from './hop-by-hop';
export * from './runtime-key-file';
