import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChannelOptions } from '@grpc/grpc-js';
import { Llm, type LlmClient } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { ReplicaPool } from './replica-pool.js';
import type { ReplicaInfo } from './replica.js';
import { startGrpcServer, type GrpcServer } from './server.js';
import { closedPort, deferred, llm, response, silent } from './test-support.js';

interface Replicas {
  servers: GrpcServer[];
  hosts: string[];
  port: number;
  /** Complete calls each replica's handler took. */
  handled: number[];
  stop(): Promise<void>;
}

/** Hooks a test gives each replica's Complete handler: `index` says which replica it runs on. */
type Behaviour = (index: number, prompt: string, signal: AbortSignal) => Promise<void> | void;

let nextHost = 20;

/** `count` servers on their own loopback addresses and one port, as pods behind a headless Service. */
async function startReplicas(
  count: number,
  behaviour: Behaviour = () => undefined,
  channelOptions: ChannelOptions = {},
): Promise<Replicas> {
  const hosts = Array.from({ length: count }, () => `127.0.0.${nextHost++}`);
  const handled = hosts.map(() => 0);
  const servers: GrpcServer[] = [];
  let port = 0;
  for (const [index, host] of hosts.entries()) {
    const server = await startGrpcServer({
      port,
      host,
      logger: silent,
      initialStatus: 'SERVING',
      channelOptions,
      services: [
        llm({
          Complete: async (request, ctx) => {
            handled[index]! += 1;
            await behaviour(index, request.prompt, ctx.signal);
            return response(`replica ${index}`);
          },
        }),
      ],
    });
    port = server.port;
    servers.push(server);
  }
  return {
    servers,
    hosts,
    port,
    handled,
    stop: async () => void (await Promise.all(servers.map((s) => s.shutdown(200)))),
  };
}

const pools: ReplicaPool<LlmClient>[] = [];
after(() => pools.forEach((pool) => pool.close()));

function poolOf(replicas: Replicas, hosts: () => string[] = () => replicas.hosts) {
  const pool = new ReplicaPool(Llm, `llm.test:${replicas.port}`, {
    deadlineMs: 5_000,
    resolve: async () => hosts(),
    resolveIntervalMs: 50,
  });
  pools.push(pool);
  return pool;
}

const complete = (pool: ReplicaPool<LlmClient>, prompt = 'hi') =>
  pool.unary((client) => client.Complete.bind(client), { prompt });

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (condition()) return;
    await sleep(10);
  }
  assert.fail(`never: ${what}`);
}

const statuses = (pool: ReplicaPool<LlmClient>) =>
  Object.fromEntries(pool.replicas().map((r: ReplicaInfo) => [r.address, r.status]));

test('calls one at a time go to every resolved replica in turn, one channel each', async () => {
  const replicas = await startReplicas(3);
  const pool = poolOf(replicas);
  try {
    await until(() => pool.replicas().filter((r) => r.status === 'SERVING').length === 3, 'all SERVING');
    for (let i = 0; i < 30; i++) await complete(pool);
    assert.deepEqual(replicas.handled, [10, 10, 10]);
    assert.deepEqual(
      pool.replicas().map((r) => [r.address, r.served, r.in_flight]),
      replicas.hosts.map((host) => [`${host}:${replicas.port}`, 10, 0]),
    );
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('a call goes to the replica with the fewest calls open from this pool', async () => {
  const release = deferred<void>();
  const replicas = await startReplicas(3, async (_index, prompt) => {
    if (prompt === 'hold') await release.promise;
  });
  let hosts = replicas.hosts.slice(0, 1);
  const pool = poolOf(replicas, () => hosts);
  try {
    await pool.refresh();
    const held = [complete(pool, 'hold'), complete(pool, 'hold')];
    await until(() => replicas.handled[0] === 2, 'both held calls on the first replica');
    hosts = replicas.hosts;
    await pool.refresh();
    await until(() => pool.replicas().filter((r) => r.status === 'SERVING').length === 3, 'all SERVING');
    assert.equal(pool.replicas()[0]?.in_flight, 2);
    for (let i = 0; i < 10; i++) await complete(pool);
    assert.deepEqual(replicas.handled, [2, 5, 5]);
    release.resolve();
    await Promise.all(held);
    assert.equal(pool.replicas()[0]?.in_flight, 0);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('a replica that leaves the name gets no new calls; one that joins gets its share', async () => {
  const replicas = await startReplicas(3);
  let hosts = replicas.hosts.slice(0, 2);
  const pool = poolOf(replicas, () => hosts);
  try {
    await pool.refresh();
    for (let i = 0; i < 4; i++) await complete(pool);
    hosts = replicas.hosts.slice(1);
    await pool.refresh();
    // A replica is preferred once it said SERVING; until then it is only UNKNOWN.
    await until(() => pool.replicas().every((r) => r.status === 'SERVING'), 'all SERVING');
    assert.deepEqual(
      pool.replicas().map((r) => r.address),
      replicas.hosts.slice(1).map((host) => `${host}:${replicas.port}`),
    );
    for (let i = 0; i < 4; i++) await complete(pool);
    assert.deepEqual(replicas.handled, [2, 4, 2]);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('NOT_SERVING and unreachable replicas are skipped; a call sent to a dead one is sent again', async () => {
  const replicas = await startReplicas(2);
  const dead = `127.0.0.${nextHost++}`;
  // Nothing listens on the dead address: the first calls, before its health watch has failed,
  // are refused there and go to another replica.
  const pool = poolOf(replicas, () => [dead, ...replicas.hosts]);
  try {
    replicas.servers[0]!.health.setAll('NOT_SERVING');
    for (let i = 0; i < 4; i++) assert.equal((await complete(pool)).text.startsWith('replica'), true);
    await until(
      () =>
        statuses(pool)[`${dead}:${replicas.port}`] === 'UNREACHABLE' &&
        statuses(pool)[`${replicas.hosts[0]}:${replicas.port}`] === 'NOT_SERVING',
      'dead UNREACHABLE, first NOT_SERVING',
    );
    const before = [...replicas.handled];
    for (let i = 0; i < 10; i++) await complete(pool);
    assert.deepEqual(replicas.handled, [before[0], before[1]! + 10]);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test("a replica's refusal is tried on another; a failure after the handler took the call is not", async () => {
  const taken = deferred<void>();
  const replicas = await startReplicas(2, async (index, prompt, signal) => {
    if (index === 0 && prompt === 'busy') throw new SwitchboardError('no_capacity');
    if (index === 0 && prompt === 'crash') {
      taken.resolve();
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    }
  });
  // The first replica is reached through a TCP relay on an address of its own, so it can "die" as
  // a killed process does: every connection dropped at once, mid-call.
  const relayHost = `127.0.0.${nextHost++}`;
  const sockets = new Set<Socket>();
  const relay = createServer((client) => {
    const upstream = connect(replicas.port, replicas.hosts[0]);
    client.pipe(upstream).pipe(client);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => relay.listen(replicas.port, relayHost, resolve));
  const pool = poolOf(replicas, () => [relayHost, replicas.hosts[1]!]);
  try {
    await pool.refresh();
    await until(() => pool.replicas().every((r) => r.status === 'SERVING'), 'all SERVING');
    for (let i = 0; i < 4; i++) assert.equal((await complete(pool, 'busy')).text, 'replica 1');
    assert.equal(replicas.handled[1], 4);

    // The other replica still answers, but is no longer preferred: the call goes through the relay.
    replicas.servers[1]!.health.setAll('NOT_SERVING');
    await until(() => pool.replicas()[1]?.status === 'NOT_SERVING', 'second NOT_SERVING');
    const before = replicas.handled.reduce((a, b) => a + b);
    const failed = complete(pool, 'crash').catch((e: unknown) => e);
    await taken.promise;
    // The handler's headers cross the relay before it "dies", as they do long before a real crash.
    await sleep(100);
    relay.close();
    for (const socket of sockets) socket.destroy();
    const error = await failed;
    assert.ok(error instanceof SwitchboardError, JSON.stringify(error));
    assert.equal(error.code, 'unavailable');
    assert.equal(
      replicas.handled.reduce((a, b) => a + b),
      before + 1,
      'not sent again',
    );
  } finally {
    pool.close();
    relay.close();
    await replicas.stop();
  }
});

test('connections that age out (GOAWAY) fail no call and leave the replica SERVING', async () => {
  const replicas = await startReplicas(
    1,
    async (_index, prompt) => {
      if (prompt === 'long') await sleep(250);
    },
    { 'grpc.max_connection_age_ms': 100, 'grpc.max_connection_age_grace_ms': 300 },
  );
  const pool = poolOf(replicas);
  try {
    await until(() => pool.replicas()[0]?.status === 'SERVING', 'SERVING');
    // Spans the first GOAWAY (at 100–110 ms) and ends within the grace period.
    const long = complete(pool, 'long');
    const seen = new Set<string>();
    for (const until = Date.now() + 1_000; Date.now() < until;) {
      await complete(pool);
      seen.add(pool.replicas()[0]!.status);
      await sleep(5);
    }
    assert.equal((await long).text, 'replica 0');
    assert.deepEqual([...seen], ['SERVING']);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('calls on a leased channel that cross a GOAWAY are sent again by grpc-js, not failed', async () => {
  // A leased call is not retried by the pool (an upload's bytes are not kept): only grpc-js's
  // transparent retry can save one that a closing connection refused before any handler took it.
  const replicas = await startReplicas(1, () => undefined, {
    'grpc.max_connection_age_ms': 50,
    'grpc.max_connection_age_grace_ms': 1_000,
  });
  const pool = poolOf(replicas);
  const failures = new Map<string, number>();
  let served = 0;
  const leased = () =>
    new Promise<void>((resolve) => {
      const { client, done } = pool.lease();
      client.Complete({ prompt: 'hi' }, (error) => {
        done();
        if (error) failures.set(error.message, (failures.get(error.message) ?? 0) + 1);
        else served += 1;
        resolve();
      });
    });
  try {
    await until(() => pool.replicas()[0]?.status === 'SERVING', 'SERVING');
    // Eight callers for 1.5 s: about thirty connections closed under them.
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (const end = Date.now() + 1_500; Date.now() < end;) await leased();
      }),
    );
    assert.deepEqual([...failures], []);
    assert.ok(served > 0);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('a stream is in flight until it ends', async () => {
  const replicas = await startReplicas(1);
  const pool = poolOf(replicas);
  try {
    const stream = pool.stream((client, options) => client.StreamComplete({ prompt: 'a b c' }, options));
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.ok(first.done !== true);
    assert.equal(first.value.delta, 'a');
    assert.equal(pool.replicas()[0]?.in_flight, 1);
    for (;;) if ((await iterator.next()).done) break;
    assert.equal(pool.replicas()[0]?.in_flight, 0);
    assert.equal(pool.replicas()[0]?.served, 1);
  } finally {
    pool.close();
    await replicas.stop();
  }
});

test('a name that resolves to nothing fails calls with unavailable', async () => {
  const pool = new ReplicaPool(Llm, `nowhere.test:${await closedPort()}`, {
    deadlineMs: 5_000,
    resolve: () => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
  });
  try {
    const error = await complete(pool).catch((e: unknown) => e);
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'unavailable');
    assert.throws(() => pool.lease(), { code: 'unavailable' });
  } finally {
    pool.close();
  }
});
