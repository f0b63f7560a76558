import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRegistry, startDependencyProbes } from '@switchboard/telemetry';
import { registerKeyStoreAge } from './key-store-age.js';
import { createGatewayMetrics } from './metrics.js';

const metricsDoc = new URL('../../../../docs/metrics.md', import.meta.url);

test("every metric of the gateway's registry is described in docs/metrics.md", async () => {
  // What gateway.ts registers, with stand-ins for the brokers.
  const registry = createRegistry('gateway');
  createGatewayMetrics(registry);
  registerKeyStoreAge(registry, { watching: () => true, natsSilentForMs: () => 0 });
  const probes = startDependencyProbes(registry, [{ dependency: 'nats', check: async () => undefined }]);
  probes.close();

  const doc = await readFile(metricsDoc, 'utf8');
  const names = registry
    .getMetricsAsArray()
    .map((metric) => metric.name)
    // prom-client's default process metrics are described as a family, not one by one.
    .filter((name) => !name.startsWith('process_') && !name.startsWith('nodejs_'));
  assert.ok(names.includes('switchboard_key_store_age_seconds'), 'the registry was built');
  const missing = names.filter((name) => !doc.includes(`\`${name}\``));
  assert.deepEqual(missing, [], `not in docs/metrics.md: ${missing.join(', ')}`);
});
