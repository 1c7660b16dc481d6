import { readdirSync, readFileSync } from 'node:fs';

/** Linux's USER_HZ: /proc times are in these ticks (100 on every mainstream kernel build). */
const TICKS_PER_SECOND = 100;

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces): state is [0]. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/**
 * CPU (user + system) used so far by process `pid` and its children, in ms: its own time, the time
 * of its children that have exited and been waited for (cutime, cstime), and the time of those
 * alive now (a PostgreSQL postmaster and its backends). Linux only; `undefined` elsewhere or when
 * the process is gone. Children that exited but were not yet waited for are missed (a few ms).
 */
export function processTreeCpuMs(pid: number): number | undefined {
  const own = statFields(pid);
  if (own === undefined) return undefined;
  // utime, stime, cutime, cstime are fields 14-17 of stat; [0] here is field 3.
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    // ppid is field 4.
    if (fields !== undefined && Number(fields[1]) === pid) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / TICKS_PER_SECOND;
}
