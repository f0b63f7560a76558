import assert from 'node:assert/strict';
import { test } from 'node:test';
import { childProcessEnv } from './child-env.js';

test("a child gets only PATH, the locale and the time zone of the worker's environment, plus its own", () => {
  const worker = {
    PATH: '/opt/bin:/usr/bin',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    CLUSTER_SECRET: 'cluster-secret-value-0123456789abcdef',
    NATS_URL: 'nats://user:password@nats:4222',
    S3_SECRET_KEY: 's3-secret',
    AVATAR_API_KEY: 'vendor-key',
    HOME: '/root',
  };
  assert.deepEqual(childProcessEnv({ HOME: '/tmp/profile' }, worker), {
    PATH: '/opt/bin:/usr/bin',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    HOME: '/tmp/profile',
  });
});

test('without a PATH in the worker, a child still finds programs in the usual folders', () => {
  assert.deepEqual(childProcessEnv({}, { LC_ALL: '' }), { PATH: '/usr/local/bin:/usr/bin:/bin' });
});
