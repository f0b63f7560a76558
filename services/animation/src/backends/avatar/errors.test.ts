// Which vendor answers are retried (429, 408, 5xx) and which fail the job at once (401/403, 400,
// other 4xx), and messages that name the vendor's kind and description but never the key.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PermanentJobError } from '../backend.js';
import {
  classifyStatus,
  describeFailure,
  faultText,
  scrub,
  upstreamFailed,
  upstreamTimeout,
} from './errors.js';

test('429, 408 and 5xx are transient; 401/403, 400/422 and other 4xx are not', () => {
  assert.deepEqual(classifyStatus(429), { retry: true, kind: 'rate_limited' });
  assert.deepEqual(classifyStatus(408), { retry: true, kind: 'timeout' });
  for (const status of [500, 502, 503, 504]) {
    assert.deepEqual(classifyStatus(status), { retry: true, kind: 'server_error' });
  }
  assert.deepEqual(classifyStatus(401), { retry: false, kind: 'unauthorized' });
  assert.deepEqual(classifyStatus(403), { retry: false, kind: 'unauthorized' });
  assert.deepEqual(classifyStatus(400), { retry: false, kind: 'invalid_request' });
  assert.deepEqual(classifyStatus(422), { retry: false, kind: 'invalid_request' });
  assert.deepEqual(classifyStatus(402), { retry: false, kind: 'client_error' });
  assert.deepEqual(classifyStatus(404), { retry: false, kind: 'client_error' });
});

test('messages carry the operation, status, kind and description, with the key cut out', () => {
  const key = 'dXNlcjpzZWNyZXQ=:abcdef123456';
  assert.equal(
    describeFailure('POST /talks', 400, { kind: 'ValidationError', description: 'validation failed' }, key),
    'D-ID POST /talks answered 400 ValidationError: validation failed',
  );
  const echoed = describeFailure(
    'GET /talks/{id}',
    401,
    { kind: 'AuthorizationError', description: `bad key ${key}` },
    key,
  );
  assert.ok(!echoed.includes(key), echoed);
  assert.match(echoed, /AuthorizationError: bad key \[redacted\]/);
  assert.equal(faultText({ kind: undefined, description: undefined }, key), '');
  assert.equal(
    describeFailure('POST /images', 500, { kind: undefined, description: undefined }, key),
    'D-ID POST /images answered 500',
  );
});

test('long vendor text is cut', () => {
  const out = scrub('x'.repeat(1000), undefined);
  assert.ok(out.length <= 201);
});

test('the job errors carry the stable codes', () => {
  const failed = upstreamFailed('m');
  assert.ok(failed instanceof PermanentJobError);
  assert.equal(failed.code, 'upstream_failed');
  assert.equal(upstreamTimeout('m').code, 'upstream_timeout');
});
