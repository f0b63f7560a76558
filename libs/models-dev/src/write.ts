// Writes a model folder all at once: files go to a sibling temporary folder that is then
// renamed into place, so a crash never leaves a half-written model that a worker would load.
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export async function writeModelFolder(dir: string, files: ReadonlyMap<string, Uint8Array>): Promise<void> {
  await mkdir(dirname(dir), { recursive: true });
  const tmp = `${dir}.partial-${process.pid}-${Date.now()}`;
  try {
    for (const [path, bytes] of files) {
      const target = join(tmp, path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, bytes);
    }
    // rename(2) replaces a missing or empty directory and fails on one that holds files.
    await rename(tmp, dir).catch((err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw new Error(`${dir} already holds files`);
      throw err;
    });
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
