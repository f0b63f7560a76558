import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ServiceError, status as GrpcStatus } from '@grpc/grpc-js';
import { Llm, Whisper, type CompleteChunk__Output } from '@switchboard/contracts';
import { SwitchboardError, errorTable } from '@switchboard/errors';
import { createClient, unary } from './client.js';
import type { RequestContext } from './context.js';
import { callMetadata } from './metadata.js';
import { defineService } from './server.js';
import { aborted, captureLogger, deferred, llm, response, serve } from './test-support.js';

const opts = { deadlineMs: 5_000 };

test('a thrown SwitchboardError reaches the client as its code and param, logged without a stack', async () => {
  const { logger, records } = captureLogger();
  const server = await serve(
    [
      llm({
        Complete: async () => {
          throw new SwitchboardError('unknown_model', { param: 'model' });
        },
      }),
    ],
    logger,
  );
  const client = createClient(Llm, server.address, opts);
  try {
    const error = await unary(client.Complete.bind(client), { prompt: 'x', model: 'nope' }).then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'unknown_model');
    assert.equal(error.param, 'model');
    assert.equal(error.message, errorTable.unknown_model.message);
    const failed = records.find((r) => r.msg === 'rpc failed');
    assert.equal(failed?.level, 'info');
    assert.equal(failed.obj.code, 'unknown_model');
    assert.equal('err' in failed.obj, false);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('an unexpected throw arrives as internal, with nothing of it on the wire; the log has the stack', async () => {
  const { logger, records } = captureLogger();
  const server = await serve(
    [
      llm({
        Complete: () => {
          throw new Error('db password hunter2 rejected');
        },
      }),
    ],
    logger,
  );
  const client = createClient(Llm, server.address, opts);
  try {
    // The raw status first: nothing of the original message may be in it.
    const raw = await new Promise<ServiceError>((resolve) => {
      client.Complete({ prompt: 'x' }, (e) => {
        if (e) resolve(e);
      });
    });
    assert.equal(raw.code, GrpcStatus.INTERNAL);
    assert.equal(raw.details, errorTable.internal.message);
    assert.doesNotMatch(JSON.stringify({ details: raw.details, md: raw.metadata.getMap() }), /hunter2/);

    const error = await unary(client.Complete.bind(client), { prompt: 'x' }).catch((e: unknown) => e);
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'internal');
    assert.doesNotMatch(error.message, /hunter2/);

    const logged = records.find((r) => r.msg === 'rpc failed unexpectedly');
    assert.equal(logged?.level, 'error');
    assert.match(String((logged.obj.err as Error).stack), /hunter2/);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('request id and key id from metadata reach the handler context', async () => {
  const seen: RequestContext[] = [];
  const server = await serve([
    llm({
      Complete: async (request, ctx) => {
        seen.push(ctx);
        return response(`${ctx.requestId}/${ctx.keyId ?? '-'}`);
      },
    }),
  ]);
  const client = createClient(Llm, server.address, opts);
  try {
    const answer = await unary(
      client.Complete.bind(client),
      { prompt: 'x' },
      callMetadata({ requestId: 'req-1', keyId: 'key-7' }),
    );
    assert.equal(answer.text, 'req-1/key-7');
    assert.equal(seen[0]?.signal.aborted, false);

    // Without metadata: a request id is made up so logs still join; no key id.
    const anonymous = await unary(client.Complete.bind(client), { prompt: 'x' });
    assert.match(anonymous.text, /^[0-9a-f-]{36}\/-$/);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('cancelling a server-streaming call aborts ctx.signal and stops the generator', async () => {
  const signal = deferred<AbortSignal>();
  let finallyRan = false;
  const server = await serve([
    llm({
      async *StreamComplete(_request, ctx) {
        signal.resolve(ctx.signal);
        try {
          for (let i = 0; !ctx.signal.aborted; i++) {
            yield { delta: `t${i}` };
            await new Promise((r) => setTimeout(r, 10));
          }
        } finally {
          finallyRan = true;
        }
      },
    }),
  ]);
  const client = createClient(Llm, server.address, { deadlineMs: 30_000 });
  try {
    const call = client.StreamComplete({ prompt: 'x' });
    const first = await new Promise<CompleteChunk__Output>((resolve) => call.once('data', resolve));
    assert.equal(first.delta, 't0');
    const ended = new Promise<ServiceError>((resolve) => call.on('error', resolve));
    call.cancel();
    await aborted(await signal.promise);
    assert.equal((await ended).code, GrpcStatus.CANCELLED);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(finallyRan, true);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('a server stream that fails midway delivers what it wrote, then the error code', async () => {
  const server = await serve([
    llm({
      async *StreamComplete() {
        yield { delta: 'a' };
        throw new SwitchboardError('no_capacity', { retryAfterSeconds: 2 });
      },
    }),
  ]);
  const client = createClient(Llm, server.address, opts);
  try {
    const call = client.StreamComplete({ prompt: 'x' });
    const got: string[] = [];
    call.on('data', (c: CompleteChunk__Output) => got.push(c.delta ?? ''));
    const error = await new Promise<ServiceError>((resolve) => call.on('error', resolve));
    assert.deepEqual(got, ['a']);
    assert.equal(error.code, GrpcStatus.UNAVAILABLE);
    assert.equal(error.metadata.get('sb-error-code')[0], 'no_capacity');
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test('a client-streaming handler reads the messages; cancelling it aborts ctx.signal', async () => {
  const signal = deferred<AbortSignal>();
  const readFailed = deferred<boolean>();
  const server = await serve([
    defineService('Whisper', {
      Transcribe: async (chunks, ctx) => {
        let bytes = 0;
        let language = '';
        try {
          for await (const chunk of chunks) {
            if (chunk.kind === 'options') language = chunk.options?.language ?? '';
            if (chunk.kind === 'data') bytes += chunk.data?.length ?? 0;
            if (language === 'hang') signal.resolve(ctx.signal);
          }
        } catch (error) {
          readFailed.resolve(true);
          throw error;
        }
        return { text: `${bytes} bytes`, language, duration_s: 0, segments: [], model: 'm' };
      },
      ListModels: async () => ({ models: [] }),
    }),
  ]);
  const client = createClient(Whisper, server.address, opts);
  try {
    const result = await new Promise<string>((resolve, reject) => {
      const call = client.Transcribe((e, r) => (e ? reject(e) : resolve(r?.text ?? '')));
      call.write({ options: { language: 'en' } });
      call.write({ data: Buffer.alloc(1000) });
      call.write({ data: Buffer.alloc(24) });
      call.end();
    });
    assert.equal(result, '1024 bytes');

    const call = client.Transcribe(() => undefined);
    call.write({ options: { language: 'hang' } });
    const ctxSignal = await signal.promise;
    call.cancel();
    await aborted(ctxSignal);
    assert.equal(await readFailed.promise, true);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});
