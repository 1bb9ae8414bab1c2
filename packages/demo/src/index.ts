export { DEFAULT_INTENT, runDemo } from './demo';
export type { DemoOptions } from './demo';
export { DemoError, readStackFile } from './stack-file';
export type { StackFile } from './stack-file';
export * from './format';
