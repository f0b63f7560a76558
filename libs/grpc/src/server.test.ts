import assert from 'node:assert/strict';
import { mock, test } from 'node:test';
import { Llm } from '@switchboard/contracts';
import { SwitchboardError } from '@switchboard/errors';
import { createClient, unary } from './client.js';
import { checkHealth } from './health-check.js';
import { shutdownOnSignals } from './server.js';
import { aborted, deferred, llm, response, serve, silent } from './test-support.js';

test('shutdown drains: the in-flight call completes, new calls fail, health says NOT_SERVING', async () => {
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
    const inFlight = unary(client.Complete.bind(client), { prompt: 'slow' });
    await started.promise;
    const stopping = server.shutdown(10_000);
    assert.equal(server.health.get(), 'NOT_SERVING');

    const refused = await unary(client.Complete.bind(client), { prompt: 'new' }).catch((e: unknown) => e);
    assert.ok(refused instanceof SwitchboardError);
    assert.equal(refused.code, 'unavailable');
    assert.equal(await checkHealth(server.address, '', 2_000), 'UNREACHABLE');

    release.resolve();
    assert.equal((await inFlight).text, 'slow');
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
  } finally {
    client.close();
  }
});

test('shutdownOnSignals drains once however many signals come, then runs onShutdown', async () => {
  const shutdown = mock.fn(async (_graceMs?: number) => {});
  const onShutdown = mock.fn(async () => {});
  const remove = shutdownOnSignals({ shutdown }, { logger: silent, graceMs: 1_234, onShutdown, exit: false });
  try {
    process.emit('SIGTERM');
    process.emit('SIGINT');
    process.emit('SIGTERM');
    await new Promise((r) => setImmediate(r));
    assert.equal(shutdown.mock.callCount(), 1);
    assert.deepEqual(shutdown.mock.calls[0]?.arguments, [1_234]);
    assert.equal(onShutdown.mock.callCount(), 1);
  } finally {
    remove();
  }
});
