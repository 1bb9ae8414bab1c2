/**
 * Sends a signal to the process group a supervised child leads (each is spawned detached, in a group of its
 * own), or to the process alone when it has no group; a process already gone is not an error.
 */
export function signalProcessGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
