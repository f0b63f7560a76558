import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentials, type Metadata, type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { Llm, Whisper, type CompleteChunk__Output } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import type { Logger } from '@switchboard/telemetry';
import { createClient, unary } from './client.js';
import { CLUSTER_SECRET_KEY, clusterSecretMatches } from './cluster-auth.js';
import { checkHealth } from './health-check.js';
import { callMetadata } from './metadata.js';
import { defineService } from './server.js';
import { llm, response, serve, silent } from './test-support.js';

const secret = 'unit-test-cluster-secret-0123456789';

/** A server with the secret whose handlers count their runs and keep the metadata they saw. */
async function guarded() {
  const warnings: { obj: Record<string, unknown>; msg: string | undefined }[] = [];
  const logger = Object.assign(Object.create(silent) as Logger, {
    warn: (obj: Record<string, unknown>, msg?: string) => warnings.push({ obj, msg }),
  });
  const seen: Metadata[] = [];
  const server = await serve(
    [
      llm({
        Complete: async (request, ctx) => {
          seen.push(ctx.metadata);
          return response(`${ctx.keyId ?? '-'}:${request.prompt}`);
        },
        async *StreamComplete(_request, ctx) {
          seen.push(ctx.metadata);
          yield { delta: 'x' };
        },
      }),
      defineService('Whisper', {
        Transcribe: async (chunks, ctx) => {
          seen.push(ctx.metadata);
          for await (const _chunk of chunks) void _chunk;
          return { text: 'heard', language: 'en', duration_s: 0, segments: [], model: 'm' };
        },
        ListModels: async () => ({ models: [] }),
      }),
    ],
    logger,
    { clusterSecret: secret },
  );
  server.health.setAll('SERVING');
  return { server, seen, warnings };
}

/** Metadata as a rogue pod would forge it: any key id, and maybe a guessed secret. */
function forged(presented?: string): Metadata {
  const metadata = callMetadata({ requestId: 'rogue', keyId: 'victim-key' });
  if (presented !== undefined) metadata.set(CLUSTER_SECRET_KEY, presented);
  return metadata;
}

async function refusal(promise: Promise<unknown>): Promise<SwitchboardError> {
  const error = await promise.then(
    () => assert.fail('expected the call to be refused'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SwitchboardError, `not a SwitchboardError: ${String(error)}`);
  return error;
}

test('clusterSecretMatches accepts only the exact secret', () => {
  assert.equal(clusterSecretMatches(secret, secret), true);
  assert.equal(clusterSecretMatches(`${secret}x`, secret), false);
  assert.equal(clusterSecretMatches(secret.slice(1), secret), false);
  assert.equal(clusterSecretMatches('', secret), false);
  assert.equal(clusterSecretMatches(undefined, secret), false);
  assert.equal(clusterSecretMatches(Buffer.from(secret), secret), false);
  assert.equal(clusterSecretMatches('', ''), false);
});

test('a unary call with forged metadata and no or a wrong secret is refused before the handler runs', async () => {
  const { server, seen, warnings } = await guarded();
  const client = new Llm(server.address, credentials.createInsecure());
  try {
    for (const presented of [
      undefined,
      'wrong-secret-but-long-enough-0123456789',
      `${secret.slice(0, -1)}X`,
    ]) {
      const error = await refusal(unary(client.Complete.bind(client), { prompt: 'x' }, forged(presented)));
      assert.equal(error.code, 'unauthorized');
      assert.equal(error.httpStatus, 401);
    }
    assert.equal(seen.length, 0, 'no handler ran');
    assert.equal(warnings.length, 3);
    assert.deepEqual(
      warnings.map((w) => w.obj.presented),
      [false, true, true],
    );
    for (const { obj, msg } of warnings) {
      assert.match(String(obj.method), /Llm\/Complete$/);
      assert.ok(!JSON.stringify({ obj, msg }).includes('wrong-secret'), 'the presented value is not logged');
    }
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('server-streaming and client-streaming calls without the secret are refused too', async () => {
  const { server, seen } = await guarded();
  const llmClient = new Llm(server.address, credentials.createInsecure());
  const whisperClient = new Whisper(server.address, credentials.createInsecure());
  try {
    const streamed = await new Promise<ServiceError>((resolve, reject) => {
      const call = llmClient.StreamComplete({ prompt: 'x' }, forged());
      call.on('data', (chunk: CompleteChunk__Output) => reject(new Error(`got ${JSON.stringify(chunk)}`)));
      call.on('error', resolve);
    });
    assert.equal(streamed.code, GrpcStatus.UNAUTHENTICATED);

    const uploaded = await new Promise<ServiceError | null>((resolve) => {
      const call = whisperClient.Transcribe(forged('not-the-secret-0123456789abcdef'), (error) =>
        resolve(error),
      );
      call.write({ options: { language: 'en' } });
      call.write({ data: Buffer.alloc(64) });
      call.end();
    });
    assert.equal(uploaded?.code, GrpcStatus.UNAUTHENTICATED);
    assert.equal(seen.length, 0, 'no handler ran');
  } finally {
    llmClient.close();
    whisperClient.close();
    await server.shutdown(1_000);
  }
});

test('grpc.health.v1 answers without the secret, as kubelet probes call it', async () => {
  const { server } = await guarded();
  try {
    assert.equal(await checkHealth(server.address, '', 5_000), 'SERVING');
  } finally {
    await server.shutdown(1_000);
  }
});

test('createClient with the secret gets through; the handler sees the key id but not the secret', async () => {
  const { server, seen } = await guarded();
  const client = createClient(Llm, server.address, { deadlineMs: 10_000, clusterSecret: secret });
  const whisperClient = createClient(Whisper, server.address, { deadlineMs: 10_000, clusterSecret: secret });
  try {
    const answer = await unary(
      client.Complete.bind(client),
      { prompt: 'hi' },
      callMetadata({ requestId: 'r1', keyId: 'k1' }),
    );
    assert.equal(answer.text, 'k1:hi');
    const text = await new Promise<string>((resolve, reject) => {
      const call = whisperClient.Transcribe((e, r) => (e ? reject(e) : resolve(r?.text ?? '')));
      call.write({ options: { language: 'en' } });
      call.end();
    });
    assert.equal(text, 'heard');
    assert.equal(seen.length, 2);
    for (const metadata of seen) assert.deepEqual(metadata.get(CLUSTER_SECRET_KEY), []);
  } finally {
    client.close();
    whisperClient.close();
    await server.shutdown(1_000);
  }
});

test('a client without the secret is refused by a server that has one', async () => {
  const { server } = await guarded();
  const client = createClient(Llm, server.address, { deadlineMs: 10_000 });
  try {
    const error = await refusal(unary(client.Complete.bind(client), { prompt: 'x' }));
    assert.equal(error.code, 'unauthorized');
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});
