import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Llm } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { createClient, unary } from './client.js';
import { checkHealth } from './health-check.js';
import { aborted, deferred, llm, response, serve } from './test-support.js';

test('shutdown drains: the in-flight call completes, new calls fail, health says NOT_SERVING; callsInFlight counts what it owes', async () => {
  const started = deferred<void>();
  const release = deferred<void>();
  const server = await serve([
    llm({
      Complete: async (request) => {
        if (request.prompt === 'slow') {
          started.resolve();
          await release.promise;
        }
        return response(request.prompt);
      },
    }),
  ]);
  server.health.setAll('SERVING');
  const client = createClient(Llm, server.address, { deadlineMs: 10_000 });
  try {
    assert.equal((await unary(client.Complete.bind(client), { prompt: 'quick' })).text, 'quick');
    assert.equal(server.callsInFlight(), 0);
    const inFlight = unary(client.Complete.bind(client), { prompt: 'slow' });
    await started.promise;
    assert.equal(server.callsInFlight(), 1);
    const stopping = server.shutdown(10_000);
    assert.equal(server.health.get(), 'NOT_SERVING');

    const refused = await unary(client.Complete.bind(client), { prompt: 'new' }).catch((e: unknown) => e);
    assert.ok(refused instanceof SwitchboardError);
    assert.equal(refused.code, 'unavailable');
    assert.equal(await checkHealth(server.address, '', 2_000), 'UNREACHABLE');
    // A call refused before any handler was never the server's to finish.
    assert.equal(server.callsInFlight(), 1);

    release.resolve();
    assert.equal((await inFlight).text, 'slow');
    assert.equal(server.callsInFlight(), 0);
    await stopping;
  } finally {
    release.resolve();
    client.close();
  }
});

test('shutdown cancels what is still running when the grace period ends', async () => {
  const signal = deferred<AbortSignal>();
  const server = await serve([
    llm({
      Complete: async (_request, ctx) => {
        signal.resolve(ctx.signal);
        await aborted(ctx.signal, 10_000);
        throw new Error('stopped');
      },
    }),
  ]);
  const client = createClient(Llm, server.address, { deadlineMs: 10_000 });
  try {
    const inFlight = unary(client.Complete.bind(client), { prompt: 'x' }).catch((e: unknown) => e);
    const ctxSignal = await signal.promise;
    const started = Date.now();
    await server.shutdown(300);
    assert.ok(Date.now() - started < 5_000);
    await aborted(ctxSignal);
    assert.ok((await inFlight) instanceof SwitchboardError);
    // The handler's own end (its throw after the abort) is what settles the count.
    for (let i = 0; i < 100 && server.callsInFlight() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.callsInFlight(), 0);
  } finally {
    client.close();
  }
});

test('a service declared for later answers unavailable (not UNIMPLEMENTED) until it is added, streams too', async () => {
  const server = await serve([], undefined, { laterServices: ['Llm'] });
  const client = createClient(Llm, server.address, { deadlineMs: 10_000, maxAttempts: 1 });
  try {
    const early = await unary(client.Complete.bind(client), { prompt: 'early' }).catch((e: unknown) => e);
    assert.ok(early instanceof SwitchboardError, String(early));
    assert.equal(early.code, 'unavailable');
    const stream = client.StreamComplete({ prompt: 'early' });
    const streamed = await new Promise<unknown>((resolve) => {
      stream.on('error', resolve);
      stream.on('end', () => resolve('ended'));
      stream.resume();
    });
    assert.equal((streamed as { code?: number }).code, 14, `UNAVAILABLE, got ${String(streamed)}`);

    server.addServices([llm()]);
    assert.equal(server.health.get('switchboard.llm.v1.Llm'), 'NOT_SERVING');
    assert.equal((await unary(client.Complete.bind(client), { prompt: 'late' })).text, 'late');
    assert.equal(server.callsInFlight(), 0);
  } finally {
    client.close();
    await server.shutdown(0);
  }
});

test('a service added after the port is bound is served, NOT_SERVING until set', async () => {
  const server = await serve([]);
  const client = createClient(Llm, server.address, { deadlineMs: 10_000 });
  try {
    server.addServices([llm({ Complete: async (request) => response(request.prompt) })]);
    assert.equal(server.health.get('switchboard.llm.v1.Llm'), 'NOT_SERVING');
    const answer = await unary(client.Complete.bind(client), { prompt: 'late' });
    assert.equal(answer.text, 'late');
  } finally {
    client.close();
    await server.shutdown(0);
  }
});
