import { readFileSync, readdirSync } from 'node:fs';

/** Fields of /proc/<pid>/stat after the command name (which may itself contain spaces and parens). */
function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null; // exited while we looked
  }
}

/** Every live process whose parent chain leads to `ancestor` (not `ancestor` itself). */
export function descendants(ancestor: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields) parents.set(Number(entry), Number(fields[1]));
  }
  const found: number[] = [];
  for (const [pid] of parents) {
    for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) {
      if (p === ancestor) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** Running, that is: not gone and not a zombie waiting for init to reap it. */
export function isRunning(pid: number): boolean {
  const fields = statFields(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** Running descendants of `ancestor` whose command name is `name` (e.g. a worker's ffmpegs). */
export function descendantsNamed(ancestor: number, name: string): number[] {
  return descendants(ancestor).filter((pid) => {
    try {
      return isRunning(pid) && readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name;
    } catch {
      return false;
    }
  });
}

/** Peak resident memory of a process so far (VmHWM), in bytes. */
export function peakRss(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no VmHWM for process ${pid}`);
  return Number(match[1]) * 1024;
}
