#!/usr/bin/env node
// Where a CPU profile's time went, in one screen: self time by where the code comes from (the process's own
// sources by folder, each dependency, Node's internals, the garbage collector, idle) and the functions with the
// most self time. Reads the `.cpuprofile` files that `--cpu-prof` makes (the benches' `--cpu-prof DIR`).
//
//   node bench/profile-summary.mjs <file.cpuprofile> [more files…] [--top 25]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, help: { type: 'boolean', short: 'h', default: false } },
});
const top = Number(values.top);
if (values.help || positionals.length === 0 || !Number.isInteger(top) || top < 1) {
  console.error('usage: node bench/profile-summary.mjs <file.cpuprofile> [more files…] [--top 25]');
  process.exit(values.help ? 0 : 2);
}

/** Where a frame's code comes from: a dependency, Node itself, a folder of the repository's sources, or V8. */
function origin(url, functionName) {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const parts = url.replace(/^file:\/\//, '').split(path.sep);
  const dist = parts.lastIndexOf('dist');
  if (dist > 1) return `${parts[dist - 1]}/${parts.slice(dist + 1, -1).join('/') || '.'}`;
  return url;
}

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const hits = new Map();
  for (const id of profile.samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  // Each sample stands for the interval before it; the total is the profile's span.
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const msPerSample = totalMs / profile.samples.length;
  const byOrigin = new Map();
  const byFunction = new Map();
  for (const [id, count] of hits) {
    const { callFrame } = byId.get(id);
    const from = origin(callFrame.url, callFrame.functionName);
    byOrigin.set(from, (byOrigin.get(from) ?? 0) + count);
    const name = `${callFrame.functionName || '(anonymous)'} ${from}:${callFrame.lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + count);
  }
  const busy = profile.samples.length - (byOrigin.get('(idle)') ?? 0);
  const share = (count) => `${((count / busy) * 100).toFixed(1)} %`;
  const ms = (count) => (count * msPerSample).toFixed(0);
  console.log(
    `\n${file}: ${totalMs.toFixed(0)} ms profiled, ${ms(busy)} ms busy (shares below are of busy time)`,
  );
  console.log('\n| self time by origin | ms | share |\n|---|---:|---:|');
  for (const [from, count] of [...byOrigin]
    .filter(([k]) => k !== '(idle)')
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`| ${from} | ${ms(count)} | ${share(count)} |`);
  console.log('\n| function (self time) | ms | share |\n|---|---:|---:|');
  for (const [name, count] of [...byFunction]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top))
    console.log(`| ${name.replaceAll('|', '\\|')} | ${ms(count)} | ${share(count)} |`);
}
