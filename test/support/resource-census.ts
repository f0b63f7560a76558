// What a set of processes holds at one moment, read from /proc and the file system: resident
// memory, open file descriptors, child processes by name, files under folders. Leak checks take
// one census before load and compare later ones with it.
import { readFileSync, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { descendants, isRunning } from './processes.js';

/** Resident memory of a process now (VmRSS), in bytes; NaN once it has exited. */
export function rss(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Open file descriptors of a process now; NaN once it has exited. */
export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/** Running descendants of `ancestor`, counted by command name (`chrome`, `ffmpeg`…). */
export function childrenByName(ancestor: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const pid of descendants(ancestor)) {
    try {
      if (!isRunning(pid)) continue;
      const name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      counts.set(name, (counts.get(name) ?? 0) + 1);
    } catch {
      // exited while we looked
    }
  }
  return counts;
}

/** Every file and folder under `dir`, as paths relative to it (empty for a missing folder). */
export async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return entries.map((entry) => join(entry)).sort();
}

/** `n` bytes as MiB with one decimal, for tables. */
export const mib = (n: number) => (n / 2 ** 20).toFixed(1);
