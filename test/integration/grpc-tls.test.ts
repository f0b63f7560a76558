// gRPC between the gateway and a worker over mutual TLS, as the chart sets it up with cert-manager
// certificates: a real llm worker process on the tiny development Llama serving TLS with a client
// CA and a plaintext health-only port, and a real gateway process that trusts the cluster CA,
// presents its client certificate and checks the worker's certificate against the Service's name
// (it dials an IP). Certificates are real, made with openssl for this run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Metadata, type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import WebSocket from 'ws';
import { Llm } from '@switchboard/contracts';
import { freePort, startNats, startRedis, type NatsHandle, type RedisHandle } from '@switchboard/devcluster';
import { checkHealth, clientTransport, createClient, waitForServing } from '@switchboard/grpc';
import {
  makeTestCertificates,
  SERVER_DNS_NAME,
  type TestCertificates,
} from '@switchboard/grpc/test-certificates';
import { admin, bearer, createKey } from '../support/admin.js';
import { spawnGateway, testClusterSecret, type SpawnedGateway } from '../support/gateway.js';
import {
  startWorker,
  tinyLlmRepository,
  type TinyModelRepository,
  type WorkerProcess,
} from '../support/worker.js';

let certs: TestCertificates;
let repo: TinyModelRepository;
let scratch: string;
let nats: NatsHandle;
let redis: RedisHandle;
let worker: WorkerProcess;
let browser: WorkerProcess;
let browserDevtools: string;
let healthAddress: string;
let gateway: SpawnedGateway;

const readPem = (file: string) => readFileSync(file);

/** A worker with TLS on its gRPC port and a plaintext health port, once that port says SERVING. */
async function startTlsWorker(name: string, env: Record<string, string>) {
  const healthPort = await freePort();
  const started = await startWorker(name, {
    env: {
      GRPC_TLS_CERT_FILE: certs.server.cert,
      GRPC_TLS_KEY_FILE: certs.server.key,
      GRPC_TLS_CA_FILE: certs.ca.cert,
      GRPC_HEALTH_PORT: String(healthPort),
      ...env,
    },
    // Its TLS port answers no plaintext probe: wait on the health-only port, as the kubelet does.
    waitServing: false,
  });
  const health = `127.0.0.1:${healthPort}`;
  const status = await waitForServing(health, { timeoutMs: 90_000 });
  if (status !== 'SERVING') {
    await started.stop();
    throw new Error(`${name} worker not SERVING (${status}):\n${started.output()}`);
  }
  return { worker: started, health };
}

before(async () => {
  certs = makeTestCertificates();
  repo = await tinyLlmRepository();
  scratch = await mkdtemp(join(tmpdir(), 'sb-grpc-tls-'));
  // Run as root, the browser worker starts Chromium as a user of its own, which must reach this.
  await chmod(scratch, 0o711);
  [nats, redis] = await Promise.all([startNats(), startRedis()]);
  const objects = { OBJECT_STORE_DIR: join(scratch, 'objects') };
  ({ worker, health: healthAddress } = await startTlsWorker('llm', {
    MODEL_DIR: repo.modelDir,
    ORT_INTRA_OP_THREADS: '1',
  }));
  const devtoolsPort = await freePort();
  browserDevtools = `127.0.0.1:${devtoolsPort}`;
  ({ worker: browser } = await startTlsWorker('browser', {
    ...nats.env('browser'),
    ...objects,
    DEVTOOLS_PORT: String(devtoolsPort),
    DEVTOOLS_HOST: '127.0.0.1',
    BROWSER_POOL_SIZE: '1',
    BROWSER_PROFILE_ROOT: scratch,
    HOME: tmpdir(),
  }));
  gateway = await spawnGateway({
    ...nats.env('gateway'),
    ...redis.env('gateway'),
    ...objects,
    LLM_ADDR: worker.address,
    BROWSER_ADDR: browser.address,
    GRPC_TLS_CA_FILE: certs.ca.cert,
    GRPC_TLS_CERT_FILE: certs.client.cert,
    GRPC_TLS_KEY_FILE: certs.client.key,
    GRPC_TLS_SERVER_NAME: SERVER_DNS_NAME,
  });
});
after(async () => {
  await gateway?.stop();
  await Promise.all([worker?.stop(), browser?.stop()]);
  await Promise.all([nats?.stop(), redis?.stop()]);
  await repo?.remove();
  if (scratch) await rm(scratch, { recursive: true, force: true, maxRetries: 5 });
  certs?.remove();
});

test('an API call goes through the gateway to the worker over mutual TLS', async () => {
  const key = await createKey(gateway);
  const res = await fetch(`${gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'hello', max_tokens: 4 }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { usage: { completion_tokens: number } };
  assert.ok(body.usage.completion_tokens > 0);
  assert.ok((await worker.metric('llm_requests_total')) >= 1);
});

test("the gateway's replica health watch sees the worker SERVING over TLS", async () => {
  const res = await admin(gateway, 'GET', '/status');
  assert.equal(res.status, 200);
  const { workers } = (await res.json()) as {
    workers: { name: string; status: string; replicas: { address: string; status: string }[] }[];
  };
  const llm = workers.find((w) => w.name === 'llm');
  assert.equal(llm?.status, 'SERVING');
  assert.deepEqual(
    llm?.replicas.map((r) => [r.address, r.status]),
    [[worker.address, 'SERVING']],
  );
});

test('the worker refuses plaintext and clients without the cluster CA certificate on its gRPC port', async () => {
  const gateway = clientTransport({
    caFile: certs.ca.cert,
    certFile: certs.client.cert,
    keyFile: certs.client.key,
    serverName: SERVER_DNS_NAME,
  });
  assert.equal(await checkHealth(worker.address, '', 2_000, gateway), 'SERVING');
  assert.equal(await checkHealth(worker.address), 'UNREACHABLE');
  const noCertificate = clientTransport({ caFile: certs.ca.cert, serverName: SERVER_DNS_NAME });
  assert.equal(await checkHealth(worker.address, '', 2_000, noCertificate), 'UNREACHABLE');
  const rogue = clientTransport({
    caFile: certs.ca.cert,
    certFile: certs.rogueClient.cert,
    keyFile: certs.rogueClient.key,
    serverName: SERVER_DNS_NAME,
  });
  assert.equal(await checkHealth(worker.address, '', 2_000, rogue), 'UNREACHABLE');
});

test('the plaintext health port answers grpc.health.v1 only: an inference call there is UNIMPLEMENTED', async () => {
  assert.equal(await checkHealth(healthAddress), 'SERVING');
  const client = createClient(Llm, healthAddress, { deadlineMs: 5_000, clusterSecret: testClusterSecret });
  try {
    const error = await new Promise<ServiceError | null>((resolve) =>
      client.Complete({ prompt: 'hello', max_tokens: 4 }, new Metadata(), (e) => resolve(e)),
    );
    assert.equal(error?.code, GrpcStatus.UNIMPLEMENTED);
  } finally {
    client.close();
  }
});

/** Opens a WebSocket; resolves once open, rejects with what refused it. */
function openSocket(url: string, options: WebSocket.ClientOptions): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, options);
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

test("a browser session's DevTools socket reaches its worker's relay over mutual TLS", async () => {
  const key = await createKey(gateway, { tier: 'professional' });
  const created = await fetch(`${gateway.url}/api/browser/session/create`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(created.status, 201, await created.clone().text());
  const { session_id: id } = (await created.json()) as { session_id: string };
  const socket = await openSocket(`${gateway.url.replace('http', 'ws')}/api/browser/session/${id}/devtools`, {
    headers: bearer(key.key),
  });
  try {
    const answer = new Promise<{ id: number; result?: { product?: string } }>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as never)),
    );
    socket.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    const { result } = await answer;
    assert.match(result?.product ?? '', /Chrome/);
  } finally {
    socket.close();
  }
  // The relay itself speaks only TLS, and only to holders of a certificate from the cluster CA.
  const path = `/devtools/${id}`;
  const headers = { 'x-switchboard-cluster-secret': testClusterSecret, 'x-switchboard-key-id': key.id };
  const tls = { headers, ca: readPem(certs.ca.cert) };
  await assert.rejects(openSocket(`ws://${browserDevtools}${path}`, { headers }));
  await assert.rejects(openSocket(`wss://${browserDevtools}${path}`, tls));
  const client = { ...tls, cert: readPem(certs.client.cert), key: readPem(certs.client.key) };
  (await openSocket(`wss://${browserDevtools}${path}`, client)).close();
});
