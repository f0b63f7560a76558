import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, firstBytes } from './ports.js';
import { findExecutable, ManagedProcess, waitUntilReady } from './process.js';

/**
 * NATS and Redis as child processes on free loopback ports. Tests always start their own: the
 * machine may run NATS on 4222 and Redis on 6379, but sharing those would make tests depend on
 * state they did not create.
 */

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 15_000;
/** A port chosen by freePort() can be taken before the server binds it; try a fresh one. */
const START_ATTEMPTS = 3;

export interface InfraHandle {
  readonly url: string;
  readonly port: number;
  /** The server process, for tests that need to crash, pause or inspect it. */
  readonly process: ManagedProcess;
  /** Graceful stop (SIGTERM, then SIGKILL); removes any temp directory this helper created. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash would (temp directory kept, so restart() resumes with it). */
  kill(): Promise<void>;
  /** SIGSTOP: sockets stay open but nothing answers. */
  pause(): void;
  resume(): void;
  /** Starts the server again on the same port (and store); stops it first if it is running. */
  restart(): Promise<void>;
}

interface Spec {
  name: string;
  scheme: string;
  command: string;
  args(port: number, dir: string): string[];
  /**
   * Ready = the server logged `readyLine` (so it is ours, not another server already on that
   * port) and it answers `send` with a reply starting with `expect`.
   */
  readyLine: string;
  probe: { send: string | null; expect: string };
}

async function startManaged(
  spec: Spec,
  requestedPort: number | undefined,
  dir: string,
  ownsDir: boolean,
): Promise<InfraHandle> {
  const command = findExecutable(spec.command);
  const launch = async (port: number): Promise<ManagedProcess> => {
    const proc = new ManagedProcess(spec.name, command, spec.args(port, dir), spec.readyLine);
    const probe = async (): Promise<boolean> =>
      proc.loggedReady &&
      (await firstBytes(port, spec.probe.send, HOST))?.startsWith(spec.probe.expect) === true;
    await waitUntilReady(proc, probe, START_TIMEOUT_MS);
    return proc;
  };

  let port = requestedPort ?? 0;
  let proc: ManagedProcess | undefined;
  for (let attempt = 1; proc === undefined; attempt++) {
    if (requestedPort === undefined) port = await freePort(HOST);
    try {
      proc = await launch(port);
    } catch (error) {
      if (requestedPort !== undefined || attempt >= START_ATTEMPTS) {
        if (ownsDir) await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  let current: ManagedProcess = proc;
  return {
    url: `${spec.scheme}://${HOST}:${port}`,
    port,
    get process() {
      return current;
    },
    async stop() {
      await current.stop();
      if (ownsDir) await rm(dir, { recursive: true, force: true });
    },
    kill: () => current.kill(),
    pause: () => current.pause(),
    resume: () => current.resume(),
    async restart() {
      await current.stop();
      current = await launch(port);
    },
  };
}

export interface StartNatsOptions {
  port?: number;
  /** JetStream store directory; when omitted a temp one is created and removed by stop(). */
  storeDir?: string;
}

/** nats-server with JetStream, bound to loopback. */
export async function startNats(options: StartNatsOptions = {}): Promise<InfraHandle> {
  const dir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'sb-nats-')));
  return startManaged(
    {
      name: 'nats-server',
      scheme: 'nats',
      command: 'nats-server',
      args: (port, storeDir) => ['-a', HOST, '-p', String(port), '-js', '-sd', storeDir],
      // The server greets every client with INFO once its listener (started after JetStream) is up.
      readyLine: 'Server is ready',
      probe: { send: null, expect: 'INFO ' },
    },
    options.port,
    dir,
    options.storeDir === undefined,
  );
}

export interface StartRedisOptions {
  port?: number;
}

/** redis-server bound to loopback, no persistence (its working dir is a temp dir, removed by stop()). */
export async function startRedis(options: StartRedisOptions = {}): Promise<InfraHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-redis-'));
  return startManaged(
    {
      name: 'redis-server',
      scheme: 'redis',
      command: 'redis-server',
      args: (port, workDir) => [
        '--port',
        String(port),
        '--bind',
        HOST,
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        workDir,
      ],
      // PONG (not LOADING) means it serves commands.
      readyLine: 'Ready to accept connections',
      probe: { send: 'PING\r\n', expect: '+PONG' },
    },
    options.port,
    dir,
    true,
  );
}
