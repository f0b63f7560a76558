import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The compiled CLI, run as the chart's init container runs it: node <file> <worker> <dir>.
const cli = join(dirname(fileURLToPath(import.meta.url)), 'dev-models-cli.js');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

test("builds a worker's development models into the folder, then leaves them alone", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-dev-models-cli-'));
  try {
    const first = run('llm', dir);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /built the tiny random-weight development model tiny-llama-dev/);
    const model = join(dir, 'llm', 'tiny-llama-dev', 'onnx', 'model.onnx');
    assert.ok(existsSync(model));
    const written = statSync(model).mtimeMs;

    const second = run('llm', dir);
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stdout, /already holds its models; nothing built/);
    assert.equal(statSync(model).mtimeMs, written, 'not rebuilt');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a worker without models, a missing folder argument or extra arguments are usage errors', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-dev-models-cli-'));
  try {
    for (const args of [['browser', dir], ['llm'], [], ['llm', dir, 'extra']]) {
      const result = run(...args);
      assert.equal(result.status, 2, args.join(' '));
      assert.match(result.stderr, /usage: dev-models-cli <llm\|whisper\|diffusion\|animation> <model dir>/);
    }
    assert.ok(!existsSync(join(dir, 'browser')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
