import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Metadata, type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { Llm, type LlmClient } from '@switchboard/contracts';
import { createClient } from './client.js';
import { checkHealth } from './health-check.js';
import { ReplicaPool } from './replica-pool.js';
import { type GrpcServer, startGrpcServer } from './server.js';
import { llm, silent } from './test-support.js';
import {
  type CertificateFiles,
  makeTestCertificates,
  SERVER_DNS_NAME,
  type TestCertificates,
} from './test-certificates.js';
import { type ClientTls, type ClientTransport, clientTransport, type ServerTls } from './tls.js';

const secret = 'unit-test-cluster-secret-0123456789';
let certs: TestCertificates;
const open: { close(): unknown }[] = [];
const servers: GrpcServer[] = [];

before(() => {
  certs = makeTestCertificates();
});
after(async () => {
  for (const client of open) client.close();
  await Promise.all(servers.map((server) => server.shutdown(0)));
  certs.remove();
});

async function start(tls: ServerTls | undefined, extra: { healthPort?: number; refreshMs?: number } = {}) {
  const server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    logger: silent,
    clusterSecret: secret,
    services: [llm()],
    tls,
    healthPort: extra.healthPort,
    tlsRefreshIntervalMs: extra.refreshMs,
  });
  servers.push(server);
  server.health.setAll('SERVING');
  return server;
}

const mutual = (): ServerTls => ({
  certFile: certs.server.cert,
  keyFile: certs.server.key,
  caFile: certs.ca.cert,
});
const gateway = (overrides: Partial<ClientTls> = {}): ClientTls => ({
  caFile: certs.ca.cert,
  certFile: certs.client.cert,
  keyFile: certs.client.key,
  ...overrides,
});

function client(
  address: string,
  transport?: ClientTransport,
  clusterSecret: string | null = secret,
): LlmClient {
  const made = createClient(Llm, address, {
    deadlineMs: 3_000,
    maxAttempts: 1,
    transport,
    ...(clusterSecret === null ? {} : { clusterSecret }),
  });
  open.push(made);
  return made;
}

/** One Complete: the status code it ended with and the text it answered. */
function complete(target: LlmClient): Promise<{ code: GrpcStatus; text?: string }> {
  return new Promise((resolve) => {
    target.Complete({ prompt: 'hi' }, new Metadata(), (error: ServiceError | null, answer) => {
      resolve(error ? { code: error.code } : { code: GrpcStatus.OK, text: answer?.text });
    });
  });
}

test('mutual TLS: a call with the cluster CA and a client certificate is served; the cluster secret is still required', async () => {
  const server = await start(mutual());
  const address = `127.0.0.1:${server.port}`;
  const transport = clientTransport(gateway());
  assert.deepEqual(await complete(client(address, transport)), { code: GrpcStatus.OK, text: 'hi' });
  assert.equal((await complete(client(address, transport, null))).code, GrpcStatus.UNAUTHENTICATED);
});

test('a plaintext client is refused by a TLS server', async () => {
  const server = await start(mutual());
  assert.equal((await complete(client(`127.0.0.1:${server.port}`))).code, GrpcStatus.UNAVAILABLE);
  assert.equal(await checkHealth(`127.0.0.1:${server.port}`), 'UNREACHABLE');
});

test('with a CA configured, a client without a certificate or with a rogue one is refused', async () => {
  const server = await start(mutual());
  const address = `127.0.0.1:${server.port}`;
  const none = clientTransport({ caFile: certs.ca.cert });
  const rogue = clientTransport(
    gateway({ certFile: certs.rogueClient.cert, keyFile: certs.rogueClient.key }),
  );
  assert.notEqual((await complete(client(address, none))).code, GrpcStatus.OK);
  assert.notEqual((await complete(client(address, rogue))).code, GrpcStatus.OK);
  assert.equal((await complete(client(address, clientTransport(gateway())))).code, GrpcStatus.OK);
});

test('without a CA the server asks for no client certificate (TLS, the cluster secret authenticates)', async () => {
  const server = await start({ certFile: certs.server.cert, keyFile: certs.server.key });
  const result = await complete(
    client(`127.0.0.1:${server.port}`, clientTransport({ caFile: certs.ca.cert })),
  );
  assert.equal(result.code, GrpcStatus.OK);
});

test('a client refuses a server whose certificate comes from another CA', async () => {
  const server = await start({ certFile: certs.rogueServer.cert, keyFile: certs.rogueServer.key });
  const result = await complete(client(`127.0.0.1:${server.port}`, clientTransport(gateway())));
  assert.equal(result.code, GrpcStatus.UNAVAILABLE);
});

test('a name the certificate lacks is refused; serverName checks another one instead', async () => {
  const server = await start(mutual());
  // The certificate names switchboard-llm and 127.0.0.1, not localhost.
  const byName = `localhost:${server.port}`;
  assert.equal((await complete(client(byName, clientTransport(gateway())))).code, GrpcStatus.UNAVAILABLE);
  const wrong = clientTransport(gateway({ serverName: 'switchboard-whisper' }));
  assert.equal((await complete(client(`127.0.0.1:${server.port}`, wrong))).code, GrpcStatus.UNAVAILABLE);
  const named = clientTransport(gateway({ serverName: SERVER_DNS_NAME }));
  assert.equal((await complete(client(byName, named))).code, GrpcStatus.OK);
});

test('the plaintext health port answers grpc.health.v1 with the main status, and nothing else', async () => {
  const server = await start(mutual(), { healthPort: 0 });
  assert.ok(server.healthPort !== undefined && server.healthPort !== server.port);
  const health = `127.0.0.1:${server.healthPort}`;
  assert.equal(await checkHealth(health), 'SERVING');
  assert.equal(await checkHealth(health, 'switchboard.llm.v1.Llm'), 'SERVING');
  // Inference is not served there, with or without the secret.
  assert.equal((await complete(client(health))).code, GrpcStatus.UNIMPLEMENTED);
  server.health.setAll('NOT_SERVING');
  assert.equal(await checkHealth(health), 'NOT_SERVING');
  await server.shutdown(0);
  assert.equal(await checkHealth(health), 'UNREACHABLE');
});

test("the replica pool's calls and health watches work over TLS", async () => {
  const server = await start(mutual());
  const pool = new ReplicaPool(Llm, `127.0.0.1:${server.port}`, {
    deadlineMs: 3_000,
    clusterSecret: secret,
    transport: clientTransport(gateway({ serverName: SERVER_DNS_NAME })),
  });
  open.push(pool);
  assert.equal(await pool.checkHealth(), 'SERVING');
  const answer = await pool.unary((c) => c.Complete.bind(c), { prompt: 'hi' });
  assert.equal(answer.text, 'hi');
  for (let i = 0; i < 50 && pool.replicas()[0]?.status !== 'SERVING'; i++) await sleep(20);
  assert.equal(pool.replicas()[0]?.status, 'SERVING');
  server.health.setAll('NOT_SERVING');
  for (let i = 0; i < 50 && pool.replicas()[0]?.status !== 'NOT_SERVING'; i++) await sleep(20);
  assert.equal(pool.replicas()[0]?.status, 'NOT_SERVING');
});

/**
 * Whether a new client is served within `ms`: after a swap the files are read on the next refresh,
 * and a shared subchannel that failed before may still be backing off, longer on a busy machine.
 */
async function servedWithin(address: string, transport: ClientTransport, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) {
    if ((await complete(client(address, transport))).code === GrpcStatus.OK) return true;
  }
  return false;
}

/** Files at fixed paths whose contents can be swapped atomically, as the kubelet swaps a Secret's. */
function swappable(initial: CertificateFiles) {
  const dir = mkdtempSync(join(certs.dir, 'mounted-'));
  const files = { cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key') };
  const put = (from: CertificateFiles) => {
    for (const part of ['cert', 'key'] as const) {
      copyFileSync(from[part], `${files[part]}.new`);
      renameSync(`${files[part]}.new`, files[part]);
    }
  };
  put(initial);
  return { files, put, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

test('a renewed server certificate is used by new connections without a restart', async () => {
  const mounted = swappable(certs.rogueServer);
  const server = await start(
    { certFile: mounted.files.cert, keyFile: mounted.files.key, caFile: certs.ca.cert },
    { refreshMs: 100 },
  );
  const address = `127.0.0.1:${server.port}`;
  const transport = clientTransport(gateway());
  assert.equal((await complete(client(address, transport))).code, GrpcStatus.UNAVAILABLE);
  mounted.put(certs.server);
  assert.ok(await servedWithin(address, transport), 'served with the renewed certificate');
  mounted.remove();
});

test("a renewed client certificate is used by the gateway's new connections without a restart", async () => {
  const server = await start(mutual());
  const mounted = swappable(certs.rogueClient);
  const transport = clientTransport(
    gateway({ certFile: mounted.files.cert, keyFile: mounted.files.key }),
    100,
  );
  const address = `127.0.0.1:${server.port}`;
  assert.notEqual((await complete(client(address, transport))).code, GrpcStatus.OK);
  mounted.put(certs.client);
  assert.ok(await servedWithin(address, transport), 'served with the renewed client certificate');
  mounted.remove();
});

test('a server whose files cannot be read fails to start', async () => {
  await assert.rejects(
    startGrpcServer({
      port: 0,
      host: '127.0.0.1',
      logger: silent,
      services: [llm()],
      tls: { certFile: join(certs.dir, 'missing.crt'), keyFile: certs.server.key },
    }),
    /cannot read the gRPC TLS certificate and key/,
  );
});

test("a pool's replicas, dialled by IP, are checked against the pool's name unless serverName says otherwise", async () => {
  const server = await start(mutual());
  const pool = (name: string, tls: ClientTls) => {
    const made = new ReplicaPool(Llm, `${name}:${server.port}`, {
      deadlineMs: 3_000,
      maxAttempts: 1,
      clusterSecret: secret,
      transport: clientTransport(tls),
      // As a headless Service's name resolves: to pod IPs.
      resolve: async () => ['127.0.0.1'],
    });
    open.push(made);
    return made;
  };
  assert.equal(await pool(SERVER_DNS_NAME, gateway()).checkHealth(), 'SERVING');
  assert.equal(await pool('switchboard-whisper', gateway()).checkHealth(), 'UNREACHABLE');
  const named = gateway({ serverName: SERVER_DNS_NAME });
  assert.equal(await pool('switchboard-whisper', named).checkHealth(), 'SERVING');
});
