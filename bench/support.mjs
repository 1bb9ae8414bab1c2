// What every bench script shares besides the harness of `@svc/testing`: checking its options, loading the
// built packages, clean-up on failure and Ctrl-C, and the pieces of its report. Not a bench itself.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/**
 * How every service process is started where it is deployed (infra/docker and the Kubernetes manifests,
 * `svc runtime up`, the development stack; decision 55): its Node options, and glibc's malloc told to give large
 * blocks back to the system when they are freed.
 */
export const DEPLOYED_NODE_OPTIONS = '--max-semi-space-size=4';
export const DEPLOYED_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/**
 * The options of bench `name` (node:util `parseArgs` config). `--help` prints them with their defaults and exits
 * 0; an unknown option or a missing value is one line on stderr and exit 2, never a stack trace.
 */
export function benchArgs(name, config) {
  const options = { ...config.options, help: { type: 'boolean', short: 'h', default: false } };
  let parsed;
  try {
    parsed = parseArgs({ ...config, options });
  } catch (error) {
    console.error(
      `${name}: ${error.message.split('\n')[0]}; \`node bench/${name}.mjs --help\` lists the options`,
    );
    process.exit(2);
  }
  if (parsed.values.help) {
    const lines = Object.entries(config.options).map(([option, spec]) => {
      const value = spec.type === 'string' ? ' <value>' : '';
      const fallback =
        spec.default === undefined || spec.default === false ? '' : ` (default ${spec.default})`;
      return `  --${option}${value}${fallback}`;
    });
    console.log(
      `usage: node bench/${name}.mjs [options]\n${lines.join('\n')}\nEach option is described in bench/README.md.`,
    );
    process.exit(0);
  }
  return parsed;
}

/**
 * The command line of the bench `name`: a bad option or a missing build prints `<name>: <why>` and exits 2;
 * `run(main)` prints a failure as `<name>: <message>` and exits 1.
 */
export function benchCli(name) {
  const fail = (message) => {
    console.error(`${name}: ${message}`);
    process.exit(2);
  };
  return {
    fail,
    intBetween(value, option, min, max) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max)
        fail(`--${option} must be an integer between ${min} and ${max}`);
      return n;
    },
    /** A number of seconds in (0, 600], as milliseconds. */
    seconds(value, option) {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0 || n > 600)
        fail(`--${option} must be a number of seconds in (0, 600]`);
      return n * 1000;
    },
    /** Fails unless these built files (paths from the root) exist. */
    assertBuilt(files) {
      for (const file of files)
        if (!existsSync(path.join(root, file))) fail(`${file} is missing; run \`pnpm run build\` first`);
    },
    /** A built file of the repository (`pnpm run build` makes it), by its path from the root. */
    load(file) {
      this.assertBuilt([file]);
      const full = path.join(root, file);
      try {
        return require(full);
      } catch (error) {
        fail(`cannot load ${file} (${error.message}); run \`pnpm run build\` first`);
      }
    },
    /** A dependency as the package in `dir` (from the root) resolves it, e.g. the Workflow API's `bullmq`. */
    requireFrom(dir, id) {
      return createRequire(path.join(root, dir, 'package.json'))(id);
    },
    run(main) {
      return main().catch((error) => {
        console.error(`${name}: ${error instanceof Error ? error.message : error}`);
        process.exit(1);
      });
    },
  };
}

/** The machine a result was measured on, with the load average before and after. */
export function machine(loadBefore, loadAfter = os.loadavg()[0]) {
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    load_average_1m: { before: loadBefore, after: loadAfter },
  };
}

/** A number with `d` decimals, `-` when it is not finite. */
export const f = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-');

/** Failures by label as `label×n label×n`, or `0`. */
export const errorList = (errors) =>
  Object.entries(errors)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ') || '0';

/** The table of load summaries (requests, req/s, p50, p99, errors) under a first column named `first`. */
export function printLoadTable(first, rows) {
  console.log(`| ${first} | requests | req/s | p50 ms | p99 ms | errors |`);
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.requests} | ${f(r.rps, 0)} | ${f(r.p50_ms, 2)} | ${f(r.p99_ms, 2)} | ${errorList(r.errors)} |`,
    );
}

/**
 * Clean-up of a bench that starts processes and makes databases and queue keys: `push` a step as soon as its
 * thing exists; `tearDown()` stops the processes, then runs the steps newest first, once, whoever asks first.
 * On SIGINT/SIGTERM `interrupted` is aborted (measurements stop, nothing is reported), everything is torn down
 * and the bench exits 130/143.
 */
export function cleanupStack(name, what) {
  const steps = [];
  const procs = [];
  const interrupted = new AbortController();
  let tearingDown;
  const tearDown = () =>
    (tearingDown ??= (async () => {
      await Promise.all(procs.map((proc) => proc.stop().catch(() => undefined)));
      for (const step of steps.reverse()) {
        try {
          await step();
        } catch (error) {
          console.error(`${name}: clean-up step failed: ${error instanceof Error ? error.message : error}`);
          process.exitCode = 1;
        }
      }
    })());
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.once(signal, () => {
      interrupted.abort();
      console.error(`${name}: ${signal}; ${what}`);
      void tearDown().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  return {
    interrupted: interrupted.signal,
    procs,
    push: (step) => steps.push(step),
    tearDown,
  };
}

const MAX_DISTINCT_LINES = 50;

/** One log line, shortened to what says what happened (pino JSON lines; other text is clipped). */
function compactLine(line) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    return { key: line.slice(0, 300), time: '' };
  }
  const error = entry.err ?? entry.error;
  const parts = [
    entry.level,
    entry.msg,
    entry.step && `step ${entry.step}`,
    entry.method && `${entry.method} ${entry.path} → ${entry.status}`,
    error && `${error.code ? `${error.code} ` : ''}${error.message ?? ''}`.trim(),
  ];
  return { key: parts.filter(Boolean).join(' | ').slice(0, 400), time: entry.time ?? '' };
}

/**
 * Counts the distinct lines a process writes (at LOG_LEVEL=warn: its warnings and errors); pass `add` as the
 * process's `onLine`. With `times`, each line also keeps the time of its first and last occurrence.
 */
export function lineCounter({ times = true } = {}) {
  const lines = new Map();
  let other = 0;
  return {
    add(line) {
      if (!line.trim()) return;
      const { key, time } = compactLine(line);
      const seen = lines.get(key);
      if (seen) {
        seen.count += 1;
        if (times) seen.last = time;
      } else if (lines.size < MAX_DISTINCT_LINES) {
        lines.set(key, times ? { count: 1, first: time, last: time } : { count: 1 });
      } else {
        other += 1;
      }
    },
    summary: () => ({ lines: [...lines.entries()].map(([line, v]) => ({ line, ...v })), other }),
  };
}

/** What a process wrote, from its {@link lineCounter}, as distinct lines with counts (on stderr). */
export function printLines(name, { lines, other }) {
  if (lines.length === 0) return;
  const total = lines.reduce((sum, l) => sum + l.count, other);
  console.error(`--- ${name}: ${total} log line(s), ${lines.length} distinct`);
  for (const l of lines) {
    const when = l.first === undefined ? '' : ` ${l.count > 1 ? `${l.first} … ${l.last}` : l.first}`;
    console.error(`  ×${l.count}${when} ${l.line}`);
  }
  if (other > 0) console.error(`  and ${other} more line(s) of other kinds`);
}

/**
 * The bench's workspace (slug `bench`) and its owner, made through the hub's public API with the harness's
 * `createHubWorkspace`.
 */
export function createBenchWorkspace(createHubWorkspace, hubUrl, databaseUrl) {
  return createHubWorkspace({
    hubUrl,
    databaseUrl,
    slug: 'bench',
    name: 'Benchmark',
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
  });
}
