import { readFile } from 'node:fs/promises';

/** An unprivileged account Chromium is started as (spawn's uid and gid). */
export interface ChromiumUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** How every Chromium of this worker is started. */
export interface ChromiumIsolation {
  /** Undefined: as the worker's own user. */
  readonly user: ChromiumUser | undefined;
  /** False only when the operator opted out (BROWSER_CHROMIUM_SANDBOX=false): `--no-sandbox`. */
  readonly sandbox: boolean;
}

/** Chromium cannot be started isolated as configured; the message names the fix. */
export class ChromiumSandboxError extends Error {}

/**
 * Who Chromium runs as. Chromium refuses its sandbox as root, so a worker running as root (the
 * local cluster, CI) starts it as `name`, an account of its own that owns nothing of the
 * worker's. A worker that is not root (the Kubernetes pods) cannot switch users and starts it as
 * itself: undefined.
 */
export async function resolveChromiumUser(
  name: string,
  workerUid: number = process.getuid?.() ?? -1,
  passwdFile = '/etc/passwd',
): Promise<ChromiumUser | undefined> {
  if (workerUid !== 0) return undefined;
  const fields = (await readFile(passwdFile, 'utf8'))
    .split('\n')
    .map((line) => line.split(':'))
    .find((entry) => entry[0] === name);
  const uid = Number(fields?.[2]);
  const gid = Number(fields?.[3]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new ChromiumSandboxError(
      `The worker runs as root, so it starts Chromium as BROWSER_CHROMIUM_USER=${name}, but there is no such user in ${passwdFile}: create it (deploy/local/setup.mjs does, as root: useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin ${name}), or name another unprivileged user.`,
    );
  }
  return { name, uid, gid };
}
