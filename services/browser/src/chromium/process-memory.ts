import { readdir, readFile } from 'node:fs/promises';

/** pid → parent pid of every process this worker can see, read from /proc in one pass. */
export type ProcessTable = Map<number, number>;

export async function readProcessTable(): Promise<ProcessTable> {
  const table: ProcessTable = new Map();
  const entries = await readdir('/proc');
  await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry)) return;
      const parent = await readParentPid(Number(entry));
      if (parent !== null) table.set(Number(entry), parent);
    }),
  );
  return table;
}

/** `root` and all of its descendants (a browser and its zygotes, renderers, GPU and utility processes). */
export function processTree(root: number, table: ProcessTable): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, parent] of table) {
    const siblings = children.get(parent);
    if (siblings) siblings.push(pid);
    else children.set(parent, [pid]);
  }
  const tree: number[] = [];
  const queue = table.has(root) ? [root] : [];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

/**
 * The memory a page can make a process grow: resident anonymous and shared memory (`RssAnon` +
 * `RssShmem` of /proc/<pid>/status: heaps, array buffers, decoded images, shared buffers between
 * Chromium's processes). File-backed pages (Chromium's binary and libraries, shared by every
 * browser on the pod) are left out. /proc/<pid>/status is readable whoever the process runs as,
 * sandboxed or not, and costs the kernel no page-table walk. 0 for a process that is gone.
 */
export async function processMemoryBytes(pid: number): Promise<number> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch {
    return 0;
  }
  return (kilobytes(status, 'RssAnon') + kilobytes(status, 'RssShmem')) * 1024;
}

/** The memory of a whole process tree, as processMemoryBytes counts it. */
export async function treeMemoryBytes(root: number, table: ProcessTable): Promise<number> {
  const sizes = await Promise.all(processTree(root, table).map(processMemoryBytes));
  return sizes.reduce((sum, bytes) => sum + bytes, 0);
}

async function readParentPid(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const parent = Number(fields[1]);
    return Number.isInteger(parent) ? parent : null;
  } catch {
    return null; // gone meanwhile
  }
}

function kilobytes(status: string, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status);
  return match ? Number(match[1]) : 0;
}
