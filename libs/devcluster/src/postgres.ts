import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { canConnect, startOnFreePort } from './ports.js';
import { findExecutable, ManagedProcess, waitUntilReady } from './process.js';
import type { InfraHandle } from './infra.js';

/**
 * PostgreSQL as a child process on a free loopback port, for the usage store: a cluster of its
 * own (initdb) in a temporary or given directory, one superuser with a random password (SCRAM
 * over TCP only; nothing trusts a local connection), and a `switchboard` database.
 */

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 30_000;
const USER = 'switchboard';
const DATABASE = 'switchboard';
const run = promisify(execFile);

export interface PostgresHandle extends InfraHandle {
  /** postgresql://switchboard:<password>@127.0.0.1:<port>/switchboard */
  readonly url: string;
  readonly password: string;
  /** The folder holding the cluster's files (and its password file). */
  readonly directory: string;
  /** Creates an empty database (a fresh name unless given) and returns its URL. */
  createDatabase(name?: string): Promise<string>;
}

export interface StartPostgresOptions {
  port?: number;
  /**
   * Where the cluster's files live; initialised when empty, reused otherwise (the local cluster
   * keeps usage across runs). Default: a temporary directory, removed by stop().
   */
  dataDir?: string;
  /** Flush to disk on commit. Off by default: tests survive a killed server (the OS keeps the pages), not a killed machine. */
  fsync?: boolean;
}

/** Debian keeps the server binaries out of PATH, under /usr/lib/postgresql/<version>/bin. */
export function postgresBinDir(): string {
  try {
    // A link on PATH (/usr/local/bin/postgres) stands for the whole folder it points into.
    return join(realpathSync(findExecutable('postgres', [])), '..');
  } catch {
    const root = '/usr/lib/postgresql';
    let versions: string[] = [];
    try {
      versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    } catch {
      // not installed
    }
    for (const version of versions) {
      try {
        return join(findExecutable('postgres', [join(root, version, 'bin')]), '..');
      } catch {
        // try an older one
      }
    }
    throw new Error(
      'PostgreSQL server binaries not found (Debian package postgresql; npm run setup installs it as root)',
    );
  }
}

/** The server refuses to run as root: started by root, it runs as the `postgres` OS user. */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'));
  if (!line) throw new Error('running as root, but there is no postgres user to run PostgreSQL as');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

async function ownedBy(user: { uid: number; gid: number } | undefined, ...paths: string[]): Promise<void> {
  if (user) await Promise.all(paths.map((path) => chown(path, user.uid, user.gid)));
}

/**
 * The server's own user must be able to pass through the folders above its directory (a state
 * folder made by mkdtemp is 0700): search permission only, and only on folders this process owns.
 */
async function traversable(user: { uid: number; gid: number } | undefined, dir: string): Promise<void> {
  if (!user) return;
  for (let parent = dirname(dir); parent !== dirname(parent); parent = dirname(parent)) {
    const info = await stat(parent);
    if (info.uid === process.getuid?.() && (info.mode & 0o001) === 0) await chmod(parent, info.mode | 0o001);
  }
}

export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresHandle> {
  const bin = postgresBinDir();
  const user = serverUser();
  const ownsDir = options.dataDir === undefined;
  const root = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'sb-postgres-')));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  const passwordFile = join(root, 'password');
  await mkdir(root, { recursive: true, mode: 0o700 });
  await mkdir(socketDir, { recursive: true, mode: 0o700 });
  await ownedBy(user, root, socketDir);
  await traversable(user, root);

  let password: string;
  const initialised = await readdir(dataDir).then(
    (entries) => entries.length > 0,
    () => false,
  );
  if (initialised) {
    password = readFileSync(passwordFile, 'utf8').trim();
  } else {
    password = randomBytes(24).toString('base64url');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    await ownedBy(user, passwordFile);
    await run(
      join(bin, 'initdb'),
      [
        '-D',
        dataDir,
        '-U',
        USER,
        `--pwfile=${passwordFile}`,
        '--auth-host=scram-sha-256',
        '--auth-local=scram-sha-256',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ],
      { uid: user?.uid, gid: user?.gid },
    ).catch((error: unknown) => {
      throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
    });
  }

  const fsync = options.fsync === true ? 'on' : 'off';
  const launch = async (port: number): Promise<ManagedProcess> => {
    const proc = new ManagedProcess(
      'postgres',
      join(bin, 'postgres'),
      [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        socketDir,
        '-c',
        `listen_addresses=${HOST}`,
        '-c',
        `fsync=${fsync}`,
        '-c',
        `full_page_writes=${fsync}`,
        '-c',
        'max_connections=200',
      ],
      'database system is ready to accept connections',
      { uid: user?.uid, gid: user?.gid },
    );
    await waitUntilReady(
      proc,
      async () => proc.loggedReady && (await canConnect(port, HOST)),
      START_TIMEOUT_MS,
    );
    return proc;
  };

  // After a crash (kill()) the server's backends outlive it for a moment and keep its shared memory;
  // it refuses to start over them until they have noticed and exited.
  const relaunch = async (port: number): Promise<ManagedProcess> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(port);
      } catch (error) {
        if (attempt >= 40 || !String(error).includes('pre-existing shared memory block')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };

  let port: number;
  let current: ManagedProcess;
  try {
    ({ port, started: current } =
      options.port === undefined
        ? await startOnFreePort(HOST, launch)
        : { port: options.port, started: await launch(options.port) });
  } catch (error) {
    if (ownsDir) await rm(root, { recursive: true, force: true });
    throw error;
  }

  const urlOf = (database: string) =>
    `postgresql://${USER}:${encodeURIComponent(password)}@${HOST}:${port}/${database}`;
  const psql = (sql: string) =>
    run(join(bin, 'psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', urlOf('postgres'), '-c', sql]);
  if (!initialised) await psql(`CREATE DATABASE ${DATABASE}`);

  let created = 0;
  return {
    url: urlOf(DATABASE),
    port,
    password,
    directory: root,
    get process() {
      return current;
    },
    async createDatabase(name) {
      const database = name ?? `sb_${process.pid}_${++created}_${randomBytes(3).toString('hex')}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`not a plain database name: ${database}`);
      await psql(`CREATE DATABASE ${database}`);
      return urlOf(database);
    },
    async stop() {
      await current.stop();
      if (ownsDir) await rm(root, { recursive: true, force: true });
    },
    kill: () => current.kill(),
    pause: () => current.pause(),
    resume: () => current.resume(),
    async restart() {
      await current.stop();
      current = await relaunch(port);
    },
  };
}
