import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { registerCallsInFlightGauge, registerServingGauge } from './serving.js';

test('switchboard_serving reads the health status at each scrape', async () => {
  const registry = new Registry();
  let serving = false;
  registerServingGauge(registry, () => serving);
  assert.match(await registry.metrics(), /^switchboard_serving 0$/m);
  serving = true;
  assert.match(await registry.metrics(), /^switchboard_serving 1$/m);
  serving = false;
  assert.match(await registry.metrics(), /^switchboard_serving 0$/m);
});

test('switchboard_grpc_calls_in_flight reads the open calls at each scrape', async () => {
  const registry = new Registry();
  let open = 0;
  registerCallsInFlightGauge(registry, () => open);
  assert.match(await registry.metrics(), /^switchboard_grpc_calls_in_flight 0$/m);
  open = 3;
  assert.match(await registry.metrics(), /^switchboard_grpc_calls_in_flight 3$/m);
});
