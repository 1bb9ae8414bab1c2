#!/usr/bin/env node
'use strict';

// The `svc` executable: runs the compiled CLI in ../dist (build it with `pnpm --filter @svc/cli build`).
let cli;
try {
  cli = require('../dist/main');
} catch (error) {
  if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes('dist/main')) {
    console.error('svc: the CLI is not built yet; run `pnpm --filter @svc/cli build` first.');
    process.exit(1);
  }
  throw error;
}
void cli.main();
