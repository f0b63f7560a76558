// DIFFUSION_MAX_PIXELS (unset, one number, per model id with `*`) and DIFFUSION_MAX_BATCH as read at
// start-up, every malformed value refused with the variable named (the rest of the schema is libs/config's).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '@switchboard/config';
import { loadDiffusionConfig } from './config.js';

// The worker reads the cluster secret too (gateway → worker authentication); any ≥ 32 chars do.
const base = { CLUSTER_SECRET: 'diffusion-config-test-secret-0123456789' };
const maxPixels = (value?: string) => loadDiffusionConfig({ ...base, DIFFUSION_MAX_PIXELS: value }).maxPixels;

test('unset or empty: no configured budget, so every model gets the one derived from its config', () => {
  assert.deepEqual(maxPixels(), { fallback: undefined, models: {} });
  assert.deepEqual(maxPixels(''), { fallback: undefined, models: {} });
  assert.ok(loadDiffusionConfig(base).maxPixels);
});

test('one number applies to every model', () => {
  assert.deepEqual(maxPixels('1048576'), { fallback: 1048576, models: {} });
  assert.deepEqual(maxPixels('4096'), { fallback: 4096, models: {} });
});

test('a JSON object sets budgets per model id; "*" covers the models it does not name', () => {
  assert.deepEqual(maxPixels('{"sdxl": 4194304, "sd15": 786432}'), {
    fallback: undefined,
    models: { sdxl: 4194304, sd15: 786432 },
  });
  assert.deepEqual(maxPixels('{"sdxl": 4194304, "*": 1048576}'), {
    fallback: 1048576,
    models: { sdxl: 4194304 },
  });
});

test('malformed values stop start-up naming DIFFUSION_MAX_PIXELS', () => {
  for (const value of [
    'lots',
    '1024x1024',
    '0',
    '-1',
    '4095',
    '1048576.5',
    '"1048576"',
    '[1048576]',
    '{"sdxl": "big"}',
    '{"sdxl": 100}',
    '{"": 1048576}',
    'null',
  ]) {
    assert.throws(
      () => maxPixels(value),
      (error: unknown) =>
        error instanceof ConfigError && error.problems.some((p) => p.startsWith('DIFFUSION_MAX_PIXELS')),
      value,
    );
  }
});

test('DIFFUSION_MAX_BATCH: 4 by default, any positive integer; 0 or a fraction stops start-up', () => {
  assert.deepEqual(loadDiffusionConfig(base).queue, { concurrency: 1, depth: 8, maxBatch: 4 });
  assert.equal(loadDiffusionConfig({ ...base, DIFFUSION_MAX_BATCH: '1' }).queue.maxBatch, 1);
  for (const value of ['0', '-2', '2.5', 'many']) {
    assert.throws(
      () => loadDiffusionConfig({ ...base, DIFFUSION_MAX_BATCH: value }),
      (error: unknown) =>
        error instanceof ConfigError && error.problems.some((p) => p.startsWith('DIFFUSION_MAX_BATCH')),
      value,
    );
  }
});
