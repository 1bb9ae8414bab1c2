#!/usr/bin/env node
// Cold start of the `svc` CLI: how long `svc --version` and `svc --help` take from process start to exit,
// against a bare `node -e 0` measured in the same run.
//
//   pnpm run build && node bench/svc-cli-startup.mjs [--runs 20] [--warmup 2] [--installed] [--compare PATH]
//                                                    [--json]
//
// Every run is a new process (execFileSync, output discarded), so each one pays Node's own start-up, module
// loading and oclif's configuration exactly as an operator's shell does; the commands are measured in
// alternating order (baseline, --version, --help, …, baseline, …) so a change of load on the machine hits all
// alike. Measured: `node -e 0` (the floor), `node apps/svc-cli/bin/run.js --version`, `--help` and, for a
// command that loads the base command and the hub contracts, `config path --json` from the monorepo build, and
// with `--installed` the same three through the `svc` executable of the packed tarball installed with npm into
// a temp prefix (`apps/svc-cli/scripts/pack.mjs`, then `npm install -g --offline`;
// removed at the end), and with `--compare PATH` the same three through another build's bin/run.js (an older
// commit's, say) in the same run.
// Target: median of `svc --version` < 300 ms. A missed target is reported, not failed: the exit code is
// non-zero only when a command fails or set-up fails. Nothing is contacted over the network.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { assertBuilt, benchCli, fail, root, run, testing } from './harness/cli.mjs';
import { f, machine, printResult, printTable, verdict } from './harness/report.mjs';
import { cleanupStack, tempDir } from './harness/stack.mjs';

const NAME = 'svc-cli-startup';
const TARGET_VERSION_MS = 300;

const options = benchCli(NAME, ({ flag, int, text }) => ({
  runs: int('20', 1, 1000),
  warmup: int('2', 0, 100),
  installed: flag(),
  compare: text(),
  json: flag(),
}));
const { runs, warmup } = options;
const appDir = path.join(root, 'apps', 'svc-cli');
const runJs = path.join(appDir, 'bin', 'run.js');
assertBuilt(['apps/svc-cli/dist/main.js', 'apps/svc-cli/oclif.manifest.json']);
const { ascending, percentile } = testing();

/** Packs the CLI and installs the tarball with npm into a temp prefix; returns the `svc` executable. */
function installPacked(work) {
  const out = path.join(work, 'out');
  const tarball = execFileSync(process.execPath, [path.join(appDir, 'scripts', 'pack.mjs'), '--out', out], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
    .trim()
    .split('\n')
    .pop();
  const prefix = path.join(work, 'prefix');
  mkdirSync(prefix, { recursive: true });
  const npm = realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim());
  execFileSync(
    process.execPath,
    [
      npm,
      'install',
      '-g',
      '--prefix',
      prefix,
      '--offline',
      '--cache',
      path.join(work, 'npm-cache'),
      '--no-audit',
      '--no-fund',
      tarball,
    ],
    { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const svc = path.join(prefix, 'bin', 'svc');
  if (!existsSync(svc)) throw new Error(`npm did not install ${svc}`);
  return svc;
}

async function main() {
  const loadBefore = os.loadavg()[0];
  const teardown = cleanupStack(NAME, 'removing the temp dir');
  const home = tempDir(teardown, `${NAME}-`);
  try {
    // A throw-away HOME and config directory, so nothing of the operator's own ~/.config/svc is read.
    const env = { ...process.env, HOME: home, SVC_CONFIG_DIR: path.join(home, 'config'), NO_COLOR: '1' };
    delete env.DEBUG;
    delete env.NODE_OPTIONS;
    /** The three measured commands through `file` (after `first` arguments), labelled `label`. */
    const svc = (label, file, first = []) => [
      { name: `svc --version (${label})`, file, args: [...first, '--version'] },
      { name: `svc --help (${label})`, file, args: [...first, '--help'] },
      { name: `svc config path --json (${label})`, file, args: [...first, 'config', 'path', '--json'] },
    ];
    const commands = [
      { name: 'node -e 0 (floor)', file: process.execPath, args: ['-e', '0'] },
      ...svc('monorepo build', process.execPath, [runJs]),
    ];
    if (options.compare) {
      const other = path.resolve(options.compare);
      if (!existsSync(other)) fail(`--compare: ${other} does not exist`);
      commands.push(...svc('--compare', process.execPath, [other]));
    }
    if (options.installed) commands.push(...svc('installed tarball', installPacked(home)));
    const samples = commands.map(() => []);
    for (let round = 0; round < warmup + runs; round += 1) {
      commands.forEach((command, index) => {
        const start = performance.now();
        try {
          execFileSync(command.file, command.args, { cwd: home, env, stdio: 'ignore' });
        } catch (error) {
          throw new Error(`${command.name} failed (${error.status ?? error.code ?? error.message})`, {
            cause: error,
          });
        }
        if (round >= warmup) samples[index].push(performance.now() - start);
      });
    }
    const floorMedian = percentile(ascending(samples[0]), 50);
    const rows = commands.map((command, index) => {
      const sorted = ascending(samples[index]);
      const median = percentile(sorted, 50);
      return {
        name: command.name,
        runs: sorted.length,
        median_ms: median,
        p90_ms: percentile(sorted, 90),
        min_ms: sorted[0],
        max_ms: sorted[sorted.length - 1],
        ratio_to_floor: median / floorMedian,
        over_floor_ms: median - floorMedian,
      };
    });
    const versionRows = rows.filter(
      (row) => row.name.startsWith('svc --version') && !row.name.includes('--compare'),
    );
    const result = {
      bench: NAME,
      target: { version_median_ms_below: TARGET_VERSION_MS },
      met: versionRows.every((row) => row.median_ms < TARGET_VERSION_MS),
      rows,
      machine: machine(loadBefore),
    };
    printResult(result, options.json, () => {
      console.log(`svc CLI cold start: ${runs} runs each after ${warmup} warm-up, alternating\n`);
      printTable(
        ['command', 'median ms', 'p90 ms', 'min ms', 'max ms', 'median ÷ floor', 'median − floor ms'],
        'lrrrrrr',
        rows.map((row) => [
          row.name,
          ...[row.median_ms, row.p90_ms, row.min_ms, row.max_ms].map((ms) => f(ms, 0)),
          `${f(row.ratio_to_floor, 2)}×`,
          f(row.over_floor_ms, 0),
        ]),
      );
      console.log(
        `\ntarget: svc --version median < ${TARGET_VERSION_MS} ms — ${verdict(result.met)} ` +
          `(${versionRows.map((row) => `${f(row.median_ms, 0)} ms`).join(', ')})`,
      );
      const m = result.machine;
      console.log(
        `machine: ${m.cpus} CPUs (${m.model}), Node ${m.node}, load average (1 min) ` +
          `${f(m.load_average_1m.before, 2)} before, ${f(m.load_average_1m.after, 2)} after`,
      );
    });
  } finally {
    await teardown.tearDown();
  }
}

run(main);
