export { startStack } from './stack';
export type { RunningStack, StackOptions } from './stack';
export type { DevStackFile } from './state';
export { formatLogLine } from './processes';
