#!/usr/bin/env node
'use strict';

// The `svc` executable: runs the compiled CLI in ../dist (build it with `pnpm --filter @svc/cli build`).

// `svc --version` alone is answered here, without loading oclif (about a hundred modules, most of a cold
// start): the same line oclif prints, `<name>/<version> <platform>-<arch> node-<node version>` (its
// Config#userAgent; test/package.test.ts compares the two). Anything else goes through oclif.
if (process.argv.length === 3 && process.argv[2] === '--version') {
  const os = require('node:os');
  const pjson = require('../package.json');
  const wsl = process.platform === 'linux' && os.release().toLowerCase().includes('microsoft');
  const arch = os.arch() === 'ia32' ? 'x86' : os.arch();
  process.stdout.write(
    `${pjson.name}/${pjson.version} ${wsl ? 'wsl' : process.platform}-${arch} node-${process.version}\n`,
  );
  return;
}

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
