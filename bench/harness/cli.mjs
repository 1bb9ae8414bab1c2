// The command line every bench shares: its options (declared once, with the default `--help` prints and the
// range a value is checked against), the built files it loads and how it fails. Not a bench itself.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The repository's root: every built file is loaded by its path from here. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);

/** The bench running in this process, for its messages; set by {@link benchCli}. */
let benchName = path.basename(process.argv[1] ?? 'bench', '.mjs');

/** `value` of option `option` as an integer between `min` and `max`; fails otherwise. */
export function intBetween(value, option, min, max) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    fail(`--${option} must be an integer between ${min} and ${max}`);
  return n;
}

/** An integer option between `min` and `max`. */
const int = (fallback, min, max) => ({
  type: 'string',
  default: fallback,
  check: (value, option) => intBetween(value, option, min, max),
});

/** A number of seconds in (0, max] (600 unless said), read as milliseconds. */
const seconds = (fallback, max = 600) => ({
  type: 'string',
  default: fallback,
  check: (value, option) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0 || n > max)
      fail(`--${option} must be a number of seconds in (0, ${max}]`);
    return n * 1000;
  },
});

/** A string option, checked by the bench itself when it needs to be. */
const text = (fallback) => ({
  type: 'string',
  ...(fallback === undefined ? {} : { default: fallback }),
});

/** An on/off option, off by default. */
const flag = () => ({ type: 'boolean', default: false });

/** Prints `<bench>: <message>` and exits 2: a bad option or a missing build. */
export function fail(message) {
  console.error(`${benchName}: ${message}`);
  process.exit(2);
}

/** Fails unless these built files (paths from the root) exist. */
export function assertBuilt(files) {
  for (const file of files)
    if (!existsSync(path.join(root, file))) fail(`${file} is missing; run \`pnpm run build\` first`);
}

/** A built file of the repository (`pnpm run build` makes it), by its path from the root. */
export function load(file) {
  assertBuilt([file]);
  try {
    return require(path.join(root, file));
  } catch (error) {
    fail(`cannot load ${file} (${error.message}); run \`pnpm run build\` first`);
  }
}

/** The test harness `@svc/testing` from its build: servers, databases, load loops and statistics. */
export const testing = () => load('packages/testing/dist/index.js');

/** A dependency as the package in `dir` (from the root) resolves it, e.g. the Workflow API's `bullmq`. */
export function requireFrom(dir, id) {
  return createRequire(path.join(root, dir, 'package.json'))(id);
}

/** Runs the bench's `main`: a failure is printed as `<bench>: <message>` and exits 1. */
export function run(main) {
  return main().catch((error) => {
    console.error(`${benchName}: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  });
}

/**
 * The command line of bench `name`: `declare(kinds)` declares its options with the kinds ({@link int},
 * {@link seconds}, {@link text}, {@link flag}). `--help` prints them with their defaults and exits 0; an unknown
 * option, a missing value or a value out of range is one line on stderr and exit 2, never a stack trace.
 * Resolves to the values, checked (seconds as milliseconds), by option name.
 */
export function benchCli(name, declare) {
  const options = declare({ int, seconds, text, flag });
  benchName = name;
  const config = Object.fromEntries(
    Object.entries(options).map(([option, { check: _check, ...spec }]) => [option, spec]),
  );
  let parsed;
  try {
    parsed = parseArgs({ options: { ...config, help: { type: 'boolean', short: 'h', default: false } } });
  } catch (error) {
    fail(`${error.message.split('\n')[0]}; \`node bench/${name}.mjs --help\` lists the options`);
  }
  if (parsed.values.help) {
    const lines = Object.entries(config).map(([option, spec]) => {
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
  return Object.fromEntries(
    Object.entries(options).map(([option, spec]) => {
      const value = parsed.values[option];
      return [option, spec.check && value !== undefined ? spec.check(value, option) : value];
    }),
  );
}
