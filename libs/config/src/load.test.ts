import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { z } from 'zod';
import { ConfigError, env, isCidr, loadConfig } from './index.js';

const schema = z.object({
  PORT: env.port(8080),
  PEER_ADDR: env.address('127.0.0.1:1'),
  ALLOW: env.cidrList(),
  DEBUG: env.boolean(false),
  NATS_URL: env.url(['nats'], 'nats://127.0.0.1:4222'),
});

test('defaults apply, values parse, and the result is deeply frozen', () => {
  const config = loadConfig(schema, {
    PORT: '9000',
    ALLOW: '10.0.0.0/8, ::1/128',
    DEBUG: 'yes',
    UNRELATED: 'x',
  });
  assert.deepEqual(config, {
    PORT: 9000,
    PEER_ADDR: '127.0.0.1:1',
    ALLOW: ['10.0.0.0/8', '::1/128'],
    DEBUG: true,
    NATS_URL: 'nats://127.0.0.1:4222',
  });
  assert.ok(Object.isFrozen(config) && Object.isFrozen(config.ALLOW));
});

test('empty strings count as unset', () => {
  assert.equal(loadConfig(schema, { PORT: '' }).PORT, 8080);
});

test('every bad variable is named at once', () => {
  const error = (() => {
    try {
      loadConfig(schema, { PORT: '70000', PEER_ADDR: 'nohost', ALLOW: '10.0.0.0/99', NATS_URL: 'http://x' });
    } catch (e) {
      return e;
    }
    return undefined;
  })();
  assert.ok(error instanceof ConfigError);
  const named = error.problems.map((p) => p.split(':')[0]).sort();
  assert.deepEqual(named, ['ALLOW', 'NATS_URL', 'PEER_ADDR', 'PORT']);
});

test('isCidr', () => {
  for (const ok of ['10.0.0.0/8', '0.0.0.0/0', '::/0', '2001:db8::/32', '192.0.2.1'])
    assert.ok(isCidr(ok), ok);
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0/8', 'x/1', '10.0.0.0/8/1', '', '10.0.0.0/'])
    assert.ok(!isCidr(bad), bad);
});

test('a variable may come from the file its _FILE variable names, never from both', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-config-'));
  try {
    const secretSchema = z
      .object({ TOKEN: env.secret(16), PORT: env.port(1) })
      .transform((e) => ({ token: e.TOKEN, port: e.PORT }));
    await writeFile(join(dir, 'token'), 'abcdefghijklmnopqrstuvwxyz\n');
    const config = loadConfig(secretSchema, { TOKEN_FILE: join(dir, 'token'), PORT_FILE: '' });
    assert.equal(config.token, 'abcdefghijklmnopqrstuvwxyz');

    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(secretSchema, env);
      } catch (e) {
        return (e as ConfigError).problems;
      }
      return [];
    };
    assert.match(
      problems({ TOKEN: 'abcdefghijklmnopqrstuvwxyz', TOKEN_FILE: join(dir, 'token') })[0]!,
      /not both/,
    );
    assert.match(
      problems({ TOKEN_FILE: join(dir, 'missing') }).join('\n'),
      /TOKEN_FILE: cannot read .* \(ENOENT\)/,
    );
    // Only the schema's own variables are read from files.
    assert.equal(
      loadConfig(secretSchema, { TOKEN: 'abcdefghijklmnopqrstuvwxyz', OTHER_FILE: '/etc/shadow' }).port,
      1,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
