#!/usr/bin/env node
// Runs `prisma generate` for the app in the current directory. The Prisma CLI insists on a schema-engine
// binary even though generation does not use it, and that binary cannot be downloaded on every machine;
// pointing PRISMA_SCHEMA_ENGINE_BINARY at any existing file satisfies the check (see docs/decisions.md).
const { spawnSync } = require('node:child_process');
const { existsSync } = require('node:fs');
const path = require('node:path');

const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY || !existsSync(env.PRISMA_SCHEMA_ENGINE_BINARY)) {
  env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
}
const cli = require.resolve('prisma/build/index.js', { paths: [process.cwd()] });
const result = spawnSync(process.execPath, [cli, 'generate', '--no-hints'], {
  cwd: process.cwd(),
  env,
  stdio: 'inherit',
});
if (result.status !== 0) {
  console.error(`prisma generate failed in ${path.basename(process.cwd())}`);
  process.exit(result.status ?? 1);
}
