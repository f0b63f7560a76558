import { chown, mkdtemp, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ChromiumSandboxError, type ChromiumUser } from './chromium-user.js';

/**
 * A fresh profile directory `<root>/<prefix>XXXXXX`. mkdtemp makes it 0700 and the worker's;
 * when Chromium runs as a user of its own, that user owns it instead (the worker, root, still
 * removes it), so Chromium writes its profile and nobody else but root enters it.
 */
export async function createProfileDir(
  root: string,
  prefix: string,
  user: ChromiumUser | undefined,
): Promise<string> {
  const dir = await mkdtemp(join(root, prefix));
  if (!user) return dir;
  try {
    await chown(dir, user.uid, user.gid);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return dir;
}

/**
 * Fails unless Chromium's user can reach `root` (search permission on it and on every folder
 * above it): a profile root inside a folder only the worker may enter would make every launch fail
 * with an error about the profile, not about its cause.
 */
export async function checkProfileRootReachable(root: string, user: ChromiumUser): Promise<void> {
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    const info = await stat(dir);
    const searchBit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & searchBit) === 0) {
      throw new ChromiumSandboxError(
        `Chromium runs as ${user.name}, which cannot enter ${dir} (mode ${(info.mode & 0o777).toString(8)}), so it cannot reach its profiles under BROWSER_PROFILE_ROOT=${root}: choose a profile root ${user.name} can reach (the default /tmp does), or let it search ${dir} (chmod o+x).`,
      );
    }
    if (dir === dirname(dir)) return;
  }
}
