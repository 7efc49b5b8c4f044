import { readdirSync, readFileSync } from 'node:fs';

/**
 * Nice values of a process's threads (Linux; this process unless told), read from /proc: field 19
 * of each task's stat. A thread that ends between the listing and the read of its stat is left
 * out: it is no longer one of the process's threads (a pool's worker stopping in its own time).
 */
export function threadNiceValues(pid: number | 'self' = 'self'): number[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((tid) => {
    const stat = statOf(`/proc/${pid}/task/${tid}/stat`);
    if (stat === null) return [];
    // the command name (field 2) may hold spaces: count fields after its closing parenthesis
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[16])];
  });
}

/** A task's stat, or null when the task has ended since it was listed. */
function statOf(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ESRCH') return null;
    throw cause;
  }
}
