export { run } from '@oclif/core';
export type { BaseArgs, BaseFlags } from './base-command';
export { BaseCommand } from './base-command';
export type { ConfigPaths } from './domain/config-paths';
export { main } from './main';
