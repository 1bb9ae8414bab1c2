// Sampling processes from /proc (Linux): CPU time of a process and its children, of the whole machine and of
// this process, and what a process holds in memory. Not a bench itself.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

function statFields(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The pid and its direct children (nginx's master and workers). */
export function withChildren(pid) {
  const pids = [pid];
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (Number(statFields(entry)[1]) === pid) pids.push(Number(entry));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return pids;
}

/** CPU milliseconds (user + system) these processes have used so far; undefined when one is gone (or no /proc). */
export function cpuMs(pids) {
  if (!pids) return undefined;
  let total = 0;
  for (const pid of pids) {
    try {
      const fields = statFields(pid);
      total += ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
    } catch {
      return undefined;
    }
  }
  return total;
}

/** CPU milliseconds (user + system) one process has used so far; undefined when it is gone. */
export const processCpuMs = (pid) => cpuMs([pid]);

/** CPU milliseconds (user + system) this process has used so far, every thread included. */
export function ownCpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** Busy and total CPU milliseconds of the whole machine so far (all CPUs), from /proc/stat. */
export function machineCpuMs() {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const ticks = values.slice(0, 8).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = ticks[3] + ticks[4];
  return { busy: ((total - idle) * 1000) / clockTicks, total: (total * 1000) / clockTicks };
}

/**
 * The machine's busy share from now on: `share()` resolves to `{ machine_busy_pct }` since the call (all CPUs
 * together; 100 % = every CPU busy).
 */
export function machineBusy() {
  const start = machineCpuMs();
  return () => {
    const end = machineCpuMs();
    const total = end.total - start.total;
    return { machine_busy_pct: total > 0 ? ((end.busy - start.busy) / total) * 100 : NaN };
  };
}

/** What a process holds in memory (MB): resident, its anonymous and file-backed parts, and the high-water mark. */
export function memoryStatus(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? NaN) / 1024;
  return { rss_mb: kb('VmRSS'), anon_mb: kb('RssAnon'), file_mb: kb('RssFile'), hwm_mb: kb('VmHWM') };
}

/** A process's resident memory in MB; undefined when it is gone. */
export function vmRssMb(pid) {
  try {
    return memoryStatus(pid).rss_mb;
  } catch {
    return undefined;
  }
}
