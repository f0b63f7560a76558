import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { webhookEnv } from './webhook-env.js';

test("the webhook store: the usage database's URL file and the kept secrets key, unless the operator names them", async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'sb-webhook-env-'));
  try {
    const keyFile = join(stateDir, 'credentials', 'webhook-secrets-key');
    const usageEnv = { USAGE_DATABASE_URL_FILE: '/state/credentials/usage-database.url' };
    assert.deepEqual(webhookEnv({}, usageEnv, stateDir), {
      WEBHOOK_DATABASE_URL_FILE: '/state/credentials/usage-database.url',
      WEBHOOK_SECRETS_KEY_FILE: keyFile,
    });
    // The operator's usage database (no runner Postgres): its URL, as given.
    assert.deepEqual(webhookEnv({ USAGE_DATABASE_URL: 'postgresql://db/usage' }, {}, stateDir), {
      WEBHOOK_DATABASE_URL: 'postgresql://db/usage',
      WEBHOOK_SECRETS_KEY_FILE: keyFile,
    });
    assert.deepEqual(webhookEnv({ USAGE_DATABASE_URL_FILE: '/run/secrets/usage' }, {}, stateDir), {
      WEBHOOK_DATABASE_URL_FILE: '/run/secrets/usage',
      WEBHOOK_SECRETS_KEY_FILE: keyFile,
    });
    // The operator's own webhook settings pass through the shared environment untouched.
    assert.deepEqual(
      webhookEnv(
        { WEBHOOK_DATABASE_URL: 'postgresql://db/webhooks', WEBHOOK_SECRETS_KEY_FILE: '/run/secrets/k' },
        usageEnv,
        stateDir,
      ),
      {},
    );
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
});
