import { readdirSync, readFileSync } from 'node:fs';

/**
 * Nice values of a process's threads (Linux; this process unless told), read from /proc: field 19
 * of each task's stat.
 */
export function threadNiceValues(pid: number | 'self' = 'self'): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // the command name (field 2) may hold spaces: count fields after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[16]);
  });
}
