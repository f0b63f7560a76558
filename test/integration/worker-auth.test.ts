// Workers trust only the gateway (docs/security.md): a real llm worker process with the tiny
// development Llama, called over gRPC the way a rogue pod that can reach its port would — forged
// `x-key-id` metadata with no cluster secret, or a wrong one — and then as the gateway calls it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { credentials, type Metadata, type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { Llm, type CompleteChunk__Output, type LlmClient } from '@switchboard/contracts';
import { errorMetadataKeys, SwitchboardError } from '@switchboard/errors';
import { callMetadata, checkHealth, CLUSTER_SECRET_KEY, createClient, unary } from '@switchboard/grpc';
import { bearer, createKey } from '../support/admin.js';
import { startGateway, testClusterSecret } from '../support/gateway.js';
import { type ModelStack, type Stack, startLlmStack } from '../support/stack.js';
import { startWorker, type WorkerProcess } from '../support/worker.js';

let llm: ModelStack;
let worker: WorkerProcess;
let stack: Stack;
let rogue: LlmClient;

const wrongSecret = 'guessed-cluster-secret-0123456789abcdef';

before(async () => {
  llm = await startLlmStack();
  ({ worker, stack } = llm);
  // A plain client, as any pod could build one: no interceptor adds the secret.
  rogue = new Llm(worker.address, credentials.createInsecure());
});
after(async () => {
  rogue?.close();
  await llm?.stop();
});

/** What a rogue pod sends: a victim's key id, and maybe a guessed secret. */
function forged(secret?: string): Metadata {
  const metadata = callMetadata({ requestId: 'rogue-request', keyId: 'victim-key-id' });
  if (secret !== undefined) metadata.set(CLUSTER_SECRET_KEY, secret);
  return metadata;
}

/** Generations the worker ran (each finished one is counted once, whatever its finish reason). */
const generations = () => worker.metric('llm_requests_total');

test('a unary call with forged metadata and no cluster secret, or a wrong one, is refused before it runs', async () => {
  for (const secret of [undefined, wrongSecret]) {
    const error = await new Promise<ServiceError>((resolve, reject) => {
      rogue.Complete(
        { prompt: 'hello', max_tokens: 4 },
        forged(secret),
        { deadline: Date.now() + 10_000 },
        (e) =>
          e ? resolve(e) : reject(new Error(`the worker answered a forged call (secret: ${String(secret)})`)),
      );
    });
    assert.equal(error.code, GrpcStatus.UNAUTHENTICATED);
    assert.deepEqual(error.metadata.get(errorMetadataKeys.code), ['unauthorized']);
  }
  // Read back as the gateway reads every worker error: the table's code, 401.
  const read = await unary(rogue.Complete.bind(rogue), { prompt: 'hello' }, forged()).catch(
    (e: unknown) => e,
  );
  assert.ok(read instanceof SwitchboardError);
  assert.equal(read.code, 'unauthorized');
  assert.equal(read.httpStatus, 401);
  assert.equal(await generations(), 0, 'no generation ran');
  assert.match(worker.output(), /grpc call without cluster secret/);
  assert.ok(!worker.output().includes(wrongSecret), 'the presented value is not logged');
});

test('a streaming call with forged metadata is refused too, without a chunk', async () => {
  const error = await new Promise<ServiceError>((resolve, reject) => {
    const call = rogue.StreamComplete({ prompt: 'hello', max_tokens: 4 }, forged(wrongSecret));
    call.on('data', (chunk: CompleteChunk__Output) =>
      reject(new Error(`got a chunk: ${JSON.stringify(chunk)}`)),
    );
    call.on('error', resolve);
  });
  assert.equal(error.code, GrpcStatus.UNAUTHENTICATED);
  assert.equal(await generations(), 0);
});

test('health answers without the secret (kubelet probes send none)', async () => {
  assert.equal(await checkHealth(worker.address, '', 5_000), 'SERVING');
  assert.equal(await checkHealth(worker.address, 'switchboard.llm.v1.Llm', 5_000), 'SERVING');
});

test('with the cluster secret the same call runs', async () => {
  const client = createClient(Llm, worker.address, { deadlineMs: 30_000, clusterSecret: testClusterSecret });
  try {
    const response = await unary(
      client.Complete.bind(client),
      { prompt: 'hello', max_tokens: 4 },
      callMetadata({ requestId: 'gateway-request', keyId: 'a-key-id' }),
    );
    assert.ok(response.usage!.completion_tokens > 0);
    assert.ok((await generations()) >= 1);
  } finally {
    client.close();
  }
});

test('through the gateway everything works', async () => {
  const key = await createKey(stack.gateway);
  const res = await fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'hello', max_tokens: 4 }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as { usage: { completion_tokens: number } };
  assert.ok(body.usage.completion_tokens > 0);
  const models = await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
  assert.equal(models.status, 200, await models.clone().text());
});

test('the gateway and the workers refuse to start without a CLUSTER_SECRET, or with a short one', async () => {
  for (const value of ['', 'too-short-0123456789']) {
    const message = value === '' ? /CLUSTER_SECRET/ : /CLUSTER_SECRET: must be at least 32 characters/;
    await assert.rejects(
      startGateway({ CLUSTER_SECRET: value }),
      message,
      `gateway, ${JSON.stringify(value)}`,
    );
    for (const name of ['llm', 'browser']) {
      await assert.rejects(
        startWorker(name, { env: { MODEL_DIR: llm.repo.modelDir, CLUSTER_SECRET: value } }),
        message,
        `${name}, ${JSON.stringify(value)}`,
      );
    }
  }
});
