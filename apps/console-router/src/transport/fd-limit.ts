import { readFileSync } from 'node:fs';

/** File descriptors the router needs for `maxConnections` WebSockets: two each, and room for the rest. */
export const fdsNeeded = (maxConnections: number) => 2 * maxConnections + 1024;

/**
 * The process's open-file limit (soft) from `/proc/self/limits`, or undefined where there is none. Node raises
 * its soft limit to the hard one when it starts, so this is in effect the hard limit the router was given
 * (`ulimit -Hn`, systemd's `LimitNOFILE=`).
 */
export function openFileLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const line = readFileSync(limits, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    if (soft === undefined) return undefined;
    return soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft) || undefined;
  } catch {
    return undefined;
  }
}
