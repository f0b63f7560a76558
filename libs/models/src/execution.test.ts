import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { ortEnvFields, transformersDeviceOptions } from './execution.js';

const schema = z.object(ortEnvFields);

test('defaults to the CPU provider with ONNX Runtime choosing threads', () => {
  const env = schema.parse({});
  assert.deepEqual(env, { ORT_EXECUTION_PROVIDERS: ['cpu'], ORT_DEVICE_ID: 0 });
  const options = transformersDeviceOptions({ providers: env.ORT_EXECUTION_PROVIDERS, deviceId: 0 });
  assert.deepEqual(options, { device: 'cpu', session_options: { executionProviders: ['cpu'] } });
});

test('cuda,cpu with a device id and threads maps to the CUDA provider first, CPU as fallback', () => {
  const env = schema.parse({
    ORT_EXECUTION_PROVIDERS: ' CUDA, cpu',
    ORT_DEVICE_ID: '1',
    ORT_INTRA_OP_THREADS: '4',
  });
  const options = transformersDeviceOptions({
    providers: env.ORT_EXECUTION_PROVIDERS,
    deviceId: env.ORT_DEVICE_ID,
    intraOpThreads: env.ORT_INTRA_OP_THREADS,
  });
  assert.deepEqual(options, {
    device: 'cuda',
    session_options: { executionProviders: [{ name: 'cuda', deviceId: 1 }, 'cpu'], intraOpNumThreads: 4 },
  });
});

test('unknown providers and bad numbers are rejected', () => {
  assert.equal(schema.safeParse({ ORT_EXECUTION_PROVIDERS: 'tpu' }).success, false);
  assert.equal(schema.safeParse({ ORT_EXECUTION_PROVIDERS: '' }).success, false);
  assert.equal(schema.safeParse({ ORT_INTRA_OP_THREADS: '0' }).success, false);
  assert.equal(schema.safeParse({ ORT_DEVICE_ID: '-1' }).success, false);
});
