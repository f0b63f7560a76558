import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gatewayKeyPepperEnv, webhookSecretsKeyEnv } from './key-pepper.js';

test('one pepper per state dir, kept between runs, readable by its owner only', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'sb-pepper-'));
  try {
    const first = gatewayKeyPepperEnv({}, stateDir);
    const file = first.KEY_PEPPER_FILE!;
    assert.equal(file, join(stateDir, 'credentials', 'key-pepper'));
    const pepper = await readFile(file, 'utf8');
    assert.match(pepper, /^[0-9a-f]{64}\n$/);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.deepEqual(gatewayKeyPepperEnv({}, stateDir), first);
    assert.equal(await readFile(file, 'utf8'), pepper, 'the next run keeps it, so stored keys still work');
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
});

test("the operator's KEY_PEPPER or KEY_PEPPER_FILE wins", () => {
  assert.deepEqual(gatewayKeyPepperEnv({ KEY_PEPPER: 'x'.repeat(40) }, '/nonexistent'), {});
  assert.deepEqual(gatewayKeyPepperEnv({ KEY_PEPPER_FILE: '/run/secrets/pepper' }, '/nonexistent'), {});
});

test("one webhook secrets key per state dir beside the pepper; the operator's wins", async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'sb-webhook-key-'));
  try {
    const first = webhookSecretsKeyEnv({}, stateDir);
    const file = first.WEBHOOK_SECRETS_KEY_FILE!;
    assert.equal(file, join(stateDir, 'credentials', 'webhook-secrets-key'));
    const key = await readFile(file, 'utf8');
    assert.match(key, /^[0-9a-f]{64}\n$/);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.deepEqual(webhookSecretsKeyEnv({}, stateDir), first);
    assert.equal(await readFile(file, 'utf8'), key, 'the next run keeps it, so stored secrets still open');
    assert.notEqual(key, await readFile(gatewayKeyPepperEnv({}, stateDir).KEY_PEPPER_FILE!, 'utf8'));
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
  assert.deepEqual(webhookSecretsKeyEnv({ WEBHOOK_SECRETS_KEY: 'x'.repeat(40) }, '/nonexistent'), {});
  assert.deepEqual(webhookSecretsKeyEnv({ WEBHOOK_SECRETS_KEY_FILE: '/run/secrets/k' }, '/nonexistent'), {});
});
