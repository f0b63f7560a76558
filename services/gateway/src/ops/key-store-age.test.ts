import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { registerKeyStoreAge } from './key-store-age.js';

async function age(registry: Registry): Promise<number> {
  const value = /^switchboard_key_store_age_seconds (\S+)$/m.exec(await registry.metrics())?.[1];
  assert.ok(value !== undefined, 'the gauge is exported');
  return Number(value);
}

test('the age is how long NATS has been silent while the key watch runs', async () => {
  let clock = 1_000_000;
  let silentMs = 0;
  const registry = new Registry();
  registerKeyStoreAge(registry, { watching: () => true, natsSilentForMs: () => silentMs }, () => clock);
  assert.equal(await age(registry), 0);
  clock += 30_000;
  silentMs = 30_000;
  assert.equal(await age(registry), 30);
  silentMs = 200; // NATS answered again
  assert.equal(await age(registry), 0.2);
});

test('once the watch is gone the age grows from the last confirmation, whatever NATS says', async () => {
  let clock = 1_000_000;
  let watching = true;
  const registry = new Registry();
  registerKeyStoreAge(registry, { watching: () => watching, natsSilentForMs: () => 0 }, () => clock);
  clock += 5_000;
  assert.equal(await age(registry), 0);
  watching = false;
  clock += 45_000;
  assert.equal(await age(registry), 45);
  watching = true;
  assert.equal(await age(registry), 0);
});
