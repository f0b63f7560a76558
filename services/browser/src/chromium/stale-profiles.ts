import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PROFILE_PREFIX } from './pooled-browser.js';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Deletes profile directories left by worker processes that no longer run (killed before they
 * could clean up). Their browsers are gone already: each exits when its worker's pipe closes.
 */
export async function removeStaleProfiles(root: string): Promise<number> {
  let removed = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    const pid = Number(/^sb-browser-(\d+)-/.exec(name)?.[1] ?? NaN);
    if (!name.startsWith(PROFILE_PREFIX) || !Number.isInteger(pid) || pid === process.pid || isRunning(pid))
      continue;
    await rm(join(root, name), { recursive: true, force: true, maxRetries: 3 });
    removed++;
  }
  return removed;
}
