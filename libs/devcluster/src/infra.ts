import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'nats';
import {
  defaultResources,
  inboxPrefix,
  natsAuthorization,
  natsRoles,
  redisAclFile,
  redisRoles,
  type BrokerUser,
  type NatsRole,
  type RedisRole,
} from '@switchboard/broker-auth';
import { firstBytes, startOnFreePort } from './ports.js';
import { findExecutable, ManagedProcess, waitUntilReady } from './process.js';

/**
 * NATS and Redis as child processes on free loopback ports. Tests always start their own: the
 * machine may run NATS on 4222 and Redis on 6379, but sharing those would make tests depend on
 * state they did not create. Both demand credentials, as in the cluster: every service gets a
 * user of its own with only its permissions (@switchboard/broker-auth), and the operator a user
 * allowed everything (for tools, and for tests that play a service or an attacker).
 */

const HOST = '127.0.0.1';
const START_TIMEOUT_MS = 15_000;

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

/** A broker whose users are known: each service's settings, and the operator's credentials. */
export interface BrokerHandle<Role extends string> extends InfraHandle {
  /** What a service of `role` is started with: the URL, its user and its password's file. */
  env(role: Role): Record<string, string>;
  /** The user and password of `role`, or of the operator (allowed everything). */
  credentials(role: Role | 'operator'): { user: string; password: string };
}

export interface NatsHandle extends BrokerHandle<NatsRole> {
  /** nats.js connect() options as `role` (or the operator) would connect. */
  connectOptions(role: NatsRole | 'operator'): ConnectionOptions;
}

export type RedisHandle = BrokerHandle<RedisRole>;

const OPERATOR_USER = 'operator';

/**
 * Fresh random passwords for every role and the operator, written one per file (mode 0600) into
 * `dir`, where the services read them (`<NAME>_PASSWORD_FILE`) and an operator's tools find them.
 */
async function makeUsers<Role extends string>(
  roles: readonly Role[],
  dir: string,
  broker: string,
): Promise<BrokerUser<Role>[]> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const users: BrokerUser<Role>[] = [...roles, OPERATOR_USER as 'operator'].map((role) => ({
    role,
    user: role,
    password: randomBytes(24).toString('base64url'),
  }));
  await Promise.all(
    users.map((u) => writeFile(passwordFile(dir, broker, u.role), `${u.password}\n`, { mode: 0o600 })),
  );
  return users;
}

const passwordFile = (dir: string, broker: string, role: string) => join(dir, `${broker}-${role}.password`);

function brokerAccess<Role extends string>(
  users: readonly BrokerUser<Role>[],
  dir: string,
  broker: 'nats' | 'redis',
  url: string,
): Pick<BrokerHandle<Role>, 'env' | 'credentials'> {
  const prefix = broker.toUpperCase();
  const find = (role: Role | 'operator') => {
    const found = users.find((u) => u.role === role);
    if (!found) throw new Error(`no ${broker} user for ${role}`);
    return { user: found.user, password: found.password };
  };
  return {
    credentials: find,
    env: (role) => ({
      [`${prefix}_URL`]: url,
      [`${prefix}_USER`]: find(role).user,
      [`${prefix}_PASSWORD_FILE`]: passwordFile(dir, broker, role),
    }),
  };
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

  let port: number;
  let current: ManagedProcess;
  try {
    ({ port, started: current } =
      requestedPort === undefined
        ? await startOnFreePort(HOST, launch)
        : { port: requestedPort, started: await launch(requestedPort) });
  } catch (error) {
    if (ownsDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }

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
  /**
   * Where the server's configuration and the users' password files go; when omitted, beside the
   * temp store (removed by stop()). The local runner keeps them under `.run/credentials`.
   */
  credentialsDir?: string;
}

/** nats-server with JetStream, bound to loopback, with a user (and permissions) per service. */
export async function startNats(options: StartNatsOptions = {}): Promise<NatsHandle> {
  const dir = options.storeDir ?? (await mkdtemp(join(tmpdir(), 'sb-nats-')));
  const credentialsDir = options.credentialsDir ?? join(dir, 'credentials');
  const users = await makeUsers(natsRoles, credentialsDir, 'nats');
  const configFile = join(credentialsDir, 'nats-server.conf');
  await writeFile(configFile, JSON.stringify(natsAuthorization(users, defaultResources), null, 2), {
    mode: 0o600,
  });
  const handle = await startManaged(
    {
      name: 'nats-server',
      scheme: 'nats',
      command: 'nats-server',
      args: (port, storeDir) => ['-c', configFile, '-a', HOST, '-p', String(port), '-js', '-sd', storeDir],
      // The server greets every client with INFO once its listener (started after JetStream) is up.
      readyLine: 'Server is ready',
      probe: { send: null, expect: 'INFO ' },
    },
    options.port,
    dir,
    options.storeDir === undefined,
  );
  const access = brokerAccess(users, credentialsDir, 'nats', handle.url);
  return Object.assign(handle, access, {
    connectOptions: (role: NatsRole | 'operator'): ConnectionOptions => {
      const { user, password } = access.credentials(role);
      return {
        servers: handle.url,
        user,
        pass: password,
        ...(role === 'operator' ? {} : { inboxPrefix: inboxPrefix(role) }),
      };
    },
  });
}

export interface StartRedisOptions {
  port?: number;
  /** Where the ACL file and the users' password files go; when omitted, in the temp working dir. */
  credentialsDir?: string;
  /** The key prefix each service's ACL allows (the gateway's RATE_LIMIT_PREFIX). */
  keyPrefixes?: Partial<Record<RedisRole, string>>;
}

/** The gateway's RATE_LIMIT_PREFIX by default; its ACL covers every key under it. */
const DEFAULT_REDIS_PREFIXES: Record<RedisRole, string> = { gateway: 'sb:' };

/**
 * redis-server bound to loopback, no persistence (its working dir is a temp dir, removed by
 * stop()), the password-less default user off and an ACL user per service.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-redis-'));
  const credentialsDir = options.credentialsDir ?? join(dir, 'credentials');
  const users = await makeUsers(redisRoles, credentialsDir, 'redis');
  const aclFile = join(credentialsDir, 'redis-users.acl');
  await writeFile(aclFile, redisAclFile(users, { ...DEFAULT_REDIS_PREFIXES, ...options.keyPrefixes }), {
    mode: 0o600,
  });
  const operator = users.find((u) => u.role === 'operator')!;
  const handle = await startManaged(
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
        '--aclfile',
        aclFile,
      ],
      // OK then PONG (not LOADING) means it serves commands, and knows its users.
      readyLine: 'Ready to accept connections',
      probe: { send: `AUTH ${operator.user} ${operator.password}\r\nPING\r\n`, expect: '+OK' },
    },
    options.port,
    dir,
    true,
  );
  return Object.assign(handle, brokerAccess(users, credentialsDir, 'redis', handle.url));
}
