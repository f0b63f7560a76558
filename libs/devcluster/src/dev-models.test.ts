import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureDevModel } from './dev-models.js';

test('an empty model repository gets the tiny development model, once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-models-'));
  try {
    const notice = await ensureDevModel(dir, 'llm');
    assert.match(notice ?? '', /tiny random-weight development model/);
    assert.ok(existsSync(join(dir, 'llm', 'tiny-llama-dev', 'onnx', 'model.onnx')));
    assert.ok(existsSync(join(dir, 'llm', 'tiny-llama-dev', 'tokenizer.json')));
    assert.equal(await ensureDevModel(dir, 'llm'), undefined, 'second run builds nothing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an operator's model is never touched, and capabilities without a builder are skipped", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-models-'));
  try {
    mkdirSync(join(dir, 'llm', 'my-real-model'), { recursive: true });
    writeFileSync(join(dir, 'llm', 'my-real-model', 'config.json'), '{}');
    assert.equal(await ensureDevModel(dir, 'llm'), undefined);
    assert.deepEqual(readdirSync(join(dir, 'llm')), ['my-real-model']);
    assert.equal(await ensureDevModel(dir, 'browser'), undefined);
    assert.ok(!existsSync(join(dir, 'browser')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
