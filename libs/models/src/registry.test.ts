import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isSwitchboardError } from '@switchboard/errors';
import { createLogger } from '@switchboard/telemetry';
import { ModelRegistry } from './registry.js';
import type { RepositoryScan } from './repository.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const scan: RepositoryScan = {
  capabilityDir: '/models/llm',
  defaultId: 'a',
  models: [
    { id: 'a', dir: '/models/llm/a', description: '' },
    { id: 'b', dir: '/models/llm/b', description: 'second' },
  ],
};

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    if (isSwitchboardError(error)) return `${error.code}:${error.param ?? error.retryAfterSeconds ?? ''}`;
    throw error;
  }
  return undefined;
}

test('loading → ready, default first; get answers model_loading, then the handle', async () => {
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const loaded: string[] = [];
  const registry = new ModelRegistry({
    scan,
    logger,
    loadingRetryAfterSeconds: 3,
    load: async (entry) => {
      order.push(entry.id);
      if (entry.id === 'a') await gate;
      return `handle-${entry.id}`;
    },
    onLoaded: (entry, status) => loaded.push(`${entry.id}:${status}`),
  });
  assert.deepEqual(
    registry.list().map((m) => [m.id, m.status, m.isDefault]),
    [
      ['a', 'loading', true],
      ['b', 'loading', false],
    ],
  );
  const ready = registry.loadAll();
  await new Promise((r) => setImmediate(r));
  assert.equal(
    code(() => registry.get('')),
    'model_loading:3',
  );
  assert.equal(
    code(() => registry.get('nope')),
    'unknown_model:model',
  );
  release();
  assert.equal(await ready, 'handle-a');
  assert.deepEqual(registry.get(''), { id: 'a', handle: 'handle-a' });
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(order, ['a', 'b']);
  assert.deepEqual(loaded, ['a:ready', 'b:ready']);
  assert.deepEqual(registry.get('b'), { id: 'b', handle: 'handle-b' });
  const summary = registry
    .listModelsResponse()
    .models.map(({ id, status, is_default, description }) => ({ id, status, is_default, description }));
  assert.deepEqual(summary, [
    { id: 'a', status: 'ready', is_default: true, description: '' },
    { id: 'b', status: 'ready', is_default: false, description: 'second' },
  ]);
});

test("/models facts: a development model says so, and a model's details appear once it is ready", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const registry = new ModelRegistry({
    scan: { ...scan, models: [{ ...scan.models[0]!, development: true }, scan.models[1]!] },
    logger,
    load: async (entry) => {
      if (entry.id === 'a') await gate;
      return entry.id;
    },
    details: (handle) => ({ dtype: 'q8', contextLength: handle === 'a' ? 512 : 256 }),
  });
  const loading = registry.loadAll();
  const before = registry.listModelsResponse().models[0]!;
  assert.deepEqual([before.development, before.dtype, before.context_length], [true, '', 0]);
  release();
  await loading;
  const [a, b] = registry.listModelsResponse().models;
  assert.deepEqual([a!.development, a!.dtype, a!.context_length, a!.languages], [true, 'q8', 512, []]);
  assert.equal(b!.development, false);
});

test('a model that fails is `failed` and answers unavailable; a failed default rejects loadAll', async () => {
  const registry = new ModelRegistry<string>({
    scan,
    logger,
    load: async (entry) => {
      throw new Error(`cannot load ${entry.id}`);
    },
  });
  await assert.rejects(registry.loadAll(), /default model a failed/);
  assert.equal(registry.list()[0]?.status, 'failed');
  assert.equal(
    code(() => registry.get('a')),
    'unavailable:',
  );
});

test('no model at all: loadAll rejects naming the folder', async () => {
  const registry = new ModelRegistry({
    scan: { capabilityDir: '/empty/llm', models: [], defaultId: undefined },
    logger,
    load: async () => 'x',
  });
  await assert.rejects(registry.loadAll(), /no model in \/empty\/llm/);
});
