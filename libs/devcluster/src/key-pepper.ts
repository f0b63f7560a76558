import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The gateway's KEY_PEPPER for the local cluster. Keys live in NATS under the state dir and
 * outlast a run, and another pepper would make every one of them fail, so the runner makes one per
 * state dir and keeps it (`<state dir>/credentials/key-pepper`, mode 0600). The gateway reads it
 * from the file (KEY_PEPPER_FILE), so it is in no process's environment. A KEY_PEPPER or
 * KEY_PEPPER_FILE the operator gives is passed on instead.
 */
export function gatewayKeyPepperEnv(env: NodeJS.ProcessEnv, stateDir: string): NodeJS.ProcessEnv {
  if (env.KEY_PEPPER || env.KEY_PEPPER_FILE) return {};
  return { KEY_PEPPER_FILE: keptKeyPepperFile(stateDir) };
}

/** The pepper's file, created with a fresh random pepper when the state dir has none yet. */
export function keptKeyPepperFile(stateDir: string): string {
  const dir = join(stateDir, 'credentials');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, 'key-pepper');
  try {
    // `wx`: never replaces an existing pepper, even when two runners start at once.
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return file;
}
