import assert from 'node:assert/strict';
import { test } from 'node:test';
import { credentials } from '@grpc/grpc-js';
import { Health, serviceNames, type HealthCheckResponse__Output } from '@switchboard/contracts';
import { createRegistry, registerServingGauge } from '@switchboard/telemetry';
import { checkHealth, waitForServing } from './health-check.js';
import { HealthReporter } from './health.js';
import { closedPort, llm, serve } from './test-support.js';

/** Collects a Watch stream's statuses; `next()` waits for the next one. */
function watch(address: string, service: string) {
  const client = new Health(address, credentials.createInsecure());
  const call = client.Watch({ service });
  const seen: string[] = [];
  const waiters: ((s: string) => void)[] = [];
  call.on('data', (m: HealthCheckResponse__Output) => {
    const waiter = waiters.shift();
    if (waiter) waiter(m.status);
    else seen.push(m.status);
  });
  const ended = new Promise<void>((resolve) => {
    call.on('end', resolve);
    call.on('error', () => resolve());
  });
  return {
    next: () =>
      new Promise<string>((resolve) =>
        seen.length > 0 ? resolve(seen.shift() ?? '') : waiters.push(resolve),
      ),
    ended,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

test('Check reports NOT_SERVING until the worker flips it, per service and overall', async () => {
  const server = await serve([llm()]);
  try {
    assert.equal(await checkHealth(server.address), 'NOT_SERVING');
    assert.equal(await checkHealth(server.address, serviceNames.Llm), 'NOT_SERVING');
    assert.equal(await checkHealth(server.address, 'no.such.Service'), 'SERVICE_UNKNOWN');

    server.health.set(serviceNames.Llm, 'SERVING');
    assert.equal(await checkHealth(server.address, serviceNames.Llm), 'SERVING');
    assert.equal(await checkHealth(server.address), 'NOT_SERVING');

    server.health.setAll('SERVING');
    assert.equal(await checkHealth(server.address), 'SERVING');
    server.health.setAll('NOT_SERVING');
    assert.equal(await checkHealth(server.address, serviceNames.Llm), 'NOT_SERVING');
  } finally {
    await server.shutdown(1_000);
  }
});

test('Watch sends the current status, then each change, and NOT_SERVING at shutdown', async () => {
  const server = await serve([llm()]);
  const overall = watch(server.address, '');
  const unknown = watch(server.address, 'no.such.Service');
  try {
    assert.equal(await overall.next(), 'NOT_SERVING');
    assert.equal(await unknown.next(), 'SERVICE_UNKNOWN');
    server.health.setAll('SERVING');
    assert.equal(await overall.next(), 'SERVING');
    server.health.setAll('SERVING'); // no change, no message
    server.health.setAll('NOT_SERVING');
    assert.equal(await overall.next(), 'NOT_SERVING');
    server.health.setAll('SERVING');
    assert.equal(await overall.next(), 'SERVING');

    await server.shutdown(2_000);
    assert.equal(await overall.next(), 'NOT_SERVING');
    await overall.ended; // the drain ended the stream rather than waiting for it
    // A late "models loaded" cannot flip a stopping server back to SERVING.
    server.health.setAll('SERVING');
    assert.equal(server.health.get(), 'NOT_SERVING');
  } finally {
    overall.close();
    unknown.close();
    await server.shutdown(1_000);
  }
});

test('checkHealth says UNREACHABLE where nothing listens; waitForServing waits for SERVING', async () => {
  assert.equal(await checkHealth(`127.0.0.1:${await closedPort()}`, '', 2_000), 'UNREACHABLE');

  const server = await serve([llm()]);
  try {
    const waiting = waitForServing(server.address, {
      service: serviceNames.Llm,
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    setTimeout(() => server.health.setAll('SERVING'), 300);
    assert.equal(await waiting, 'SERVING');
    assert.equal(await checkHealth(server.address, 'no.such.Service', 10_000), 'SERVICE_UNKNOWN');
    // A service that never serves: the wait gives up at its deadline with what it last heard (each
    // check within a second, so on a loaded machine that may be UNREACHABLE), never SERVING.
    const gaveUp = await waitForServing(server.address, {
      service: 'no.such.Service',
      timeoutMs: 1_000,
      intervalMs: 100,
    });
    assert.ok(gaveUp === 'SERVICE_UNKNOWN' || gaveUp === 'UNREACHABLE', gaveUp);
  } finally {
    await server.shutdown(1_000);
  }
});

test('switchboard_serving follows the overall status: 0 at start, 1 once SERVING, 0 from shutdown on', async () => {
  const health = new HealthReporter(['switchboard.llm.v1.Llm']);
  const registry = createRegistry('llm');
  registerServingGauge(registry, () => health.isServing());
  const serving = async () =>
    /^switchboard_serving\{service="llm"\} (\d)$/m.exec(await registry.metrics())?.[1];
  assert.equal(await serving(), '0');
  health.set('switchboard.llm.v1.Llm', 'SERVING');
  assert.equal(await serving(), '0', 'one service serving is not the server as a whole');
  health.setAll('SERVING');
  assert.equal(await serving(), '1');
  health.close();
  health.setAll('SERVING');
  assert.equal(await serving(), '0');
});
