import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Llm } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { createClient, unary } from './client.js';
import { aborted, closedPort, deferred, llm, response, serve } from './test-support.js';

async function failure(promise: Promise<unknown>): Promise<SwitchboardError> {
  const error = await promise.then(
    () => assert.fail('expected a failure'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SwitchboardError, `not a SwitchboardError: ${String(error)}`);
  return error;
}

test('a client to a port where nothing listens fails fast with unavailable', async () => {
  const client = createClient(Llm, `127.0.0.1:${await closedPort()}`, { deadlineMs: 30_000 });
  try {
    const started = Date.now();
    const error = await failure(unary(client.Complete.bind(client), { prompt: 'x' }));
    assert.equal(error.code, 'unavailable');
    // Fails without waiting for the deadline (30 s): no waitForReady, a few short retries.
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
  } finally {
    client.close();
  }
});

test('the default deadline applies to every call and maps to upstream_timeout; the handler sees the abort', async () => {
  const signal = deferred<AbortSignal>();
  const server = await serve([
    llm({
      Complete: async (_request, ctx) => {
        signal.resolve(ctx.signal);
        await aborted(ctx.signal, 10_000);
        return response('too late');
      },
    }),
  ]);
  const client = createClient(Llm, server.address, { deadlineMs: 300 });
  try {
    const error = await failure(unary(client.Complete.bind(client), { prompt: 'x' }));
    assert.equal(error.code, 'upstream_timeout');
    await aborted(await signal.promise);
    // A deadline the caller gives wins over the default.
    const quick = await unary(client.ListModels.bind(client), {}, undefined, {
      deadline: Date.now() + 5_000,
    });
    assert.equal(quick.models[0]?.id, 'test-model');
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test("a handler's answers are not retried by the channel, refusals included (ReplicaPool retries those)", async () => {
  let attempts = 0;
  const server = await serve([
    llm({
      Complete: async (request) => {
        attempts++;
        if (request.prompt === 'busy') throw new SwitchboardError('no_capacity');
        if (request.prompt === 'bad') throw new SwitchboardError('invalid_request', { param: 'prompt' });
        return response(`attempt ${attempts}`);
      },
    }),
  ]);
  const client = createClient(Llm, server.address, { deadlineMs: 5_000 });
  const complete = client.Complete.bind(client);
  try {
    // The handler took the call (its headers went out first), so the work may have run.
    assert.equal((await failure(unary(complete, { prompt: 'busy' }))).code, 'no_capacity');
    assert.equal(attempts, 1);

    attempts = 0;
    const bad = await failure(unary(complete, { prompt: 'bad' }));
    assert.equal(bad.code, 'invalid_request');
    assert.equal(bad.param, 'prompt');
    assert.equal(attempts, 1);
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});

test("aborting unary's signal cancels the call on the worker", async () => {
  const signal = deferred<AbortSignal>();
  const server = await serve([
    llm({
      Complete: async (_request, ctx) => {
        signal.resolve(ctx.signal);
        await aborted(ctx.signal, 10_000);
        return response('unused');
      },
    }),
  ]);
  const client = createClient(Llm, server.address, { deadlineMs: 30_000 });
  try {
    const controller = new AbortController();
    const pending = failure(
      unary(client.Complete.bind(client), { prompt: 'x' }, undefined, { signal: controller.signal }),
    );
    const workerSignal = await signal.promise;
    controller.abort();
    await aborted(workerSignal);
    await pending;
  } finally {
    client.close();
    await server.shutdown(1_000);
  }
});
