/**
 * The output of a long-running command (`svc runtime up`) whose terminal or reader may go away. Once a write to
 * stdout or stderr fails (EPIPE on a pipe nobody reads, EIO on a closed terminal), nothing more is written to
 * that stream and `gone` resolves once: the caller stops as on SIGHUP.
 *
 * Without this, a failed write emits `error`; a handler that logs about it writes again, fails again, and the
 * process spins on the next tick for ever (the event loop never reaches a timer or a signal).
 */
export interface TerminalOutput {
  /** Writes one line to `stream`; a no-op once that stream has failed. */
  write(stream: 'stdout' | 'stderr', line: string): void;
  /** Resolves with the failed stream's name the first time a write to stdout or stderr fails. */
  gone: Promise<'stdout' | 'stderr'>;
}

export function watchTerminalOutput(
  streams: { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream } = {
    stdout: process.stdout,
    stderr: process.stderr,
  },
): TerminalOutput {
  const closed = { stdout: false, stderr: false };
  let report: (name: 'stdout' | 'stderr') => void = () => undefined;
  const gone = new Promise<'stdout' | 'stderr'>((resolve) => {
    report = resolve;
  });
  const fail = (name: 'stdout' | 'stderr') => {
    if (closed[name]) return;
    closed[name] = true;
    report(name);
  };
  // Kept for the life of the process: any later write (oclif's own, at exit) fails quietly too.
  streams.stdout.on('error', () => fail('stdout'));
  streams.stderr.on('error', () => fail('stderr'));
  return {
    gone,
    write(name, line) {
      if (closed[name]) return;
      try {
        streams[name].write(line);
      } catch {
        fail(name);
      }
    },
  };
}
