import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchboardError } from '@switchboard/errors';
import { normalizeCidr, validateCreate, validatePatch, validateGraceSeconds } from './validate.js';

function paramOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SwitchboardError);
    assert.equal(error.code, 'invalid_request');
    return error.param;
  }
  assert.fail('expected a validation error');
}

test('CIDRs: IPv4 and IPv6, bare addresses become single hosts', () => {
  assert.equal(normalizeCidr('10.0.0.0/8'), '10.0.0.0/8');
  assert.equal(normalizeCidr('192.168.1.7'), '192.168.1.7/32');
  assert.equal(normalizeCidr('2001:DB8::/32'), '2001:db8::/32');
  assert.equal(normalizeCidr('::1'), '::1/128');
  assert.equal(normalizeCidr('0.0.0.0/0'), '0.0.0.0/0');
  for (const bad of [
    '10.0.0.0/33',
    '::/129',
    '10.0.0/8',
    '10.0.0.0/',
    '10.0.0.0/8/1',
    'fe80::1%eth0/64',
    'example.com',
    '10.0.0.0/-1',
    '10.0.0.0/ 8',
    '',
  ]) {
    assert.equal(normalizeCidr(bad), null, bad);
  }
});

test('create validation names the field at fault', () => {
  assert.deepEqual(validateCreate({ name: ' ci ', tier: 'basic' }), {
    name: 'ci',
    tier: 'basic',
    ip_allowlist: [],
    rate_limit_per_minute: null,
  });
  assert.equal(
    paramOf(() => validateCreate({ name: '', tier: 'basic' })),
    'name',
  );
  assert.equal(
    paramOf(() => validateCreate({ name: 'x'.repeat(101), tier: 'basic' })),
    'name',
  );
  assert.equal(
    paramOf(() => validateCreate({ name: 'a', tier: 'gold' as never })),
    'tier',
  );
  assert.equal(
    paramOf(() => validateCreate({ name: 'a', tier: 'basic', ip_allowlist: ['nope'] })),
    'ip_allowlist',
  );
  assert.equal(
    paramOf(() => validateCreate({ name: 'a', tier: 'basic', ip_allowlist: '10.0.0.0/8' as never })),
    'ip_allowlist',
  );
  for (const bad of [0, -1, 1.5, '10', Number.NaN]) {
    assert.equal(
      paramOf(() => validateCreate({ name: 'a', tier: 'basic', rate_limit_per_minute: bad as never })),
      'rate_limit_per_minute',
    );
  }
  assert.equal(
    paramOf(() => validateCreate(null as never)),
    undefined,
  );
});

test('patch validation checks only present fields and ignores unknown ones', () => {
  assert.deepEqual(validatePatch({ rate_limit_per_minute: null, extra: 1 } as never), {
    rate_limit_per_minute: null,
  });
  assert.equal(
    paramOf(() => validatePatch({ tier: 'free' as never })),
    'tier',
  );
  assert.equal(
    paramOf(() => validateGraceSeconds(86_401)),
    'grace_seconds',
  );
  assert.equal(validateGraceSeconds(0), 0);
});
