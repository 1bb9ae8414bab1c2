// What the processes of a bench wrote, kept as distinct lines with counts and printed when a run fails. Not a
// bench itself.

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
