// The pieces of a bench's report: numbers, tables, verdicts against targets, the machine it ran on and the
// failures it counted. Not a bench itself.
import os from 'node:os';
import { testing } from './cli.mjs';

/** A number with `d` decimals, `-` when it is not finite (a measurement that produced nothing). */
export const f = (n, d = 1) => testing().fixed(n, d);

/** A whole number with a space between thousands (`20 000`), `-` when it is not finite. */
export const whole = (n) =>
  Number.isFinite(n) ? Math.round(n).toLocaleString('en-US').replace(/,/g, ' ') : '-';

/** Failures by label as `label×n label×n`, or `0`. */
export const errorList = (errors) =>
  Object.entries(errors)
    .map(([k, v]) => `${k}×${v}`)
    .join(' ') || '0';

/** The machine a result was measured on, with the load average before and after. */
export function machine(loadBefore, loadAfter = os.loadavg()[0]) {
  return {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model ?? 'unknown',
    node: process.version,
    load_average_1m: { before: loadBefore, after: loadAfter },
  };
}

/** A load average before and after, as `1.23 → 1.45`. */
export const loadChange = ({ before, after }) => `${f(before, 2)} → ${f(after, 2)}`;

/** A target's verdict. */
export const verdict = (met) => (met ? 'met' : 'NOT met');

/** One target's line: `<what was measured> — target <wanted>: met` (or `NOT met`). */
export const targetLine = (measured, wanted, met) => `${measured} — target ${wanted}: ${verdict(met)}`;

/**
 * A Markdown table: the header `titles`, `align` with one letter per column (`l` left, `r` right) and one
 * array of cells per row.
 */
export function printTable(titles, align, rows) {
  console.log(`| ${titles.join(' | ')} |`);
  console.log(`|${[...align].map((a) => (a === 'r' ? '---:' : '---')).join('|')}|`);
  for (const cells of rows) console.log(`| ${cells.join(' | ')} |`);
}

/** The table of load summaries (requests, req/s, p50, p99, errors) under a first column named `first`. */
export function printLoadTable(first, rows) {
  printTable(
    [first, 'requests', 'req/s', 'p50 ms', 'p99 ms', 'errors'],
    'lrrrrr',
    rows.map((r) => [r.name, r.requests, f(r.rps, 0), f(r.p50_ms, 2), f(r.p99_ms, 2), errorList(r.errors)]),
  );
}

/**
 * Failures counted by label. With `examples`, the first few also keep their detail, and the JSON report holds
 * `{ counts, examples }`; without, it holds the counts.
 */
export function failureLog({ examples: keep = 0 } = {}) {
  const counts = new Map();
  const examples = [];
  return {
    add(label, detail) {
      counts.set(label, (counts.get(label) ?? 0) + 1);
      if (examples.length < keep) examples.push(detail ? `${label}: ${detail}` : label);
    },
    /** Adds every failure another log counted. */
    addAll(other) {
      for (const [label, n] of Object.entries(other.counts()))
        counts.set(label, (counts.get(label) ?? 0) + n);
    },
    get total() {
      return [...counts.values()].reduce((a, b) => a + b, 0);
    },
    counts: () => Object.fromEntries(counts),
    examples,
    toJSON() {
      return keep > 0 ? { counts: Object.fromEntries(counts), examples } : Object.fromEntries(counts);
    },
  };
}

/**
 * Measurements of several rounds as one: numbers are summed, arrays joined, objects combined key by key (a
 * key missing from a round counts as 0) and booleans must hold in every round. `rules` names the paths
 * (`cpu.machine_busy_pct`) taken as the `mean` or the `max` instead, or combined by a function of the rounds'
 * values. Rates and percentiles are the caller's to compute again from the sums and the joined samples.
 */
export function combineRounds(list, rules = {}, at = '') {
  const out = {};
  const keys = new Set(list.flatMap((m) => Object.keys(m ?? {})));
  for (const key of keys) {
    const where = at ? `${at}.${key}` : key;
    const values = list.map((m) => m?.[key]);
    const rule = rules[where];
    const kind = typeof values.find((v) => v !== undefined);
    const sum = () => values.reduce((a, b) => a + (b ?? 0), 0);
    if (typeof rule === 'function') out[key] = rule(values);
    else if (rule === 'mean') out[key] = sum() / values.length;
    else if (rule === 'max') out[key] = Math.max(...values);
    else if (kind === 'number') out[key] = sum();
    else if (kind === 'boolean') out[key] = values.every(Boolean);
    else if (values.some(Array.isArray)) out[key] = values.flat();
    else out[key] = combineRounds(values, rules, where);
  }
  return out;
}

/**
 * A target checked: its value (null when not measured), what is wanted and `met` (null when not measured), from
 * `target` ({@link atMost}, {@link atLeast}, {@link below}).
 */
export const targetCheck = (name, value, target) => ({
  name,
  value: value ?? null,
  target: target.wanted,
  met: value === undefined || !Number.isFinite(value) ? null : target.met(value),
});

/** The table of {@link targetCheck}s: value, what is wanted and the verdict. */
export function printTargetTable(targets) {
  printTable(
    ['target', 'value', 'wanted', 'verdict'],
    'lrrl',
    targets.map((t) => [
      t.name,
      t.value === null ? '-' : f(t.value, 2),
      t.target,
      t.met === null ? 'not measured' : verdict(t.met),
    ]),
  );
}

/** A target of at most `limit` (a ratio, unless `unit` says otherwise), for {@link targetCheck}. */
export const atMost = (limit, unit = '×') => ({ wanted: `≤ ${limit}${unit}`, met: (v) => v <= limit });
/** A target of at least `limit`, likewise. */
export const atLeast = (limit, unit = '×') => ({ wanted: `≥ ${limit}${unit}`, met: (v) => v >= limit });
/** A target below `limit`, likewise. */
export const below = (limit, unit = '') => ({ wanted: `< ${limit}${unit}`, met: (v) => v < limit });

/** Prints the result as JSON when `json` is set (`--json`), else with `asText`. */
export function printResult(result, json, asText) {
  if (json) console.log(JSON.stringify(result, null, 2));
  else asText(result);
}
