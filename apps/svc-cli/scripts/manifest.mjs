// Writes oclif.manifest.json next to package.json from the compiled commands in dist/: with it, oclif finds
// a command without loading every command module, which is most of a cold start. Run after `tsc` (the
// package's build does both), so the manifest can never describe other code than the one beside it.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
const ids = Object.keys(plugin.manifest.commands ?? {});
if (ids.length === 0) {
  console.error('oclif manifest: no commands found in dist/commands (build first)');
  process.exit(1);
}
writeFileSync(path.join(root, 'oclif.manifest.json'), `${JSON.stringify(plugin.manifest, null, 2)}\n`);
console.log(`oclif.manifest.json: ${ids.length} commands`);
