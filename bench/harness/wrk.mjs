// wrk as the HTTP client of a bench: its own process (C), so the client does not share the bench's event loop.
// A small Lua `done()` prints wrk's whole latency histogram, so percentiles can be taken over several runs
// together. Not a bench itself.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** wrk's full latency histogram (microseconds, count) and its summary, printed when a run is done. */
const WRK_SCRIPT = `done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("@@summary %d %d %d %d %d %d %d\\n", summary.requests, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, #latency do
    local value, count = latency(i)
    io.write(string.format("@@latency %d %d\\n", value, count))
  end
end
`;

function parseWrk(stdout) {
  const summary = /^@@summary (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)$/m.exec(stdout);
  if (!summary) throw new Error(`cannot read wrk's output:\n${stdout.slice(0, 2000)}`);
  const [requests, durationUs, connect, read, write, status, timeout] = summary.slice(1).map(Number);
  const latencies = [];
  for (const [, value, count] of stdout.matchAll(/^@@latency (\d+) (\d+)$/gm))
    for (let i = 0; i < Number(count); i += 1) latencies.push(Number(value) / 1000);
  const errors = new Map(
    Object.entries({ connect, read, write, 'non-2xx': status, timeout }).filter(([, n]) => n > 0),
  );
  // The histogram holds every answered request; answers that were not 2xx/3xx are also counted as errors (and
  // fail the run).
  return { latencies, errors, elapsedMs: durationUs / 1000, requests };
}

/**
 * wrk at `executable` with its histogram script written into `dir`: `run({ url, headers, seconds })` runs
 * `wrk -t1 -c<concurrency>` for whole seconds and resolves to its run (latencies, errors by kind, elapsed ms).
 */
export function wrkClient(executable, { dir, concurrency, timeoutS, signal }) {
  const luaFile = path.join(dir, 'histogram.lua');
  writeFileSync(luaFile, WRK_SCRIPT);
  return {
    async run({ url, headers, seconds }) {
      const headerArgs = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
      const { stdout } = await execFileAsync(
        executable,
        [
          '-t1',
          `-c${concurrency}`,
          `-d${seconds}s`,
          '--timeout',
          `${timeoutS}s`,
          '-s',
          luaFile,
          ...headerArgs,
          url,
        ],
        { maxBuffer: 256 * 1024 * 1024, signal },
      );
      return parseWrk(stdout);
    },
  };
}
