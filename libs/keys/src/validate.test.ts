import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchboardError } from '@switchboard/errors';
import {
  isSafeDisplayText,
  normalizeCidr,
  validateCreate,
  validatePatch,
  validateGraceSeconds,
} from './validate.js';

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
    quotas: {},
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

test('names with control, unpaired surrogate or bidirectional formatting characters are refused', () => {
  const refused = [
    'ci\u0000key',
    'ci\u0007',
    '\tci',
    'ci\nkey',
    'ci\u007f',
    'ci\u0085key',
    'ci\u009b31m',
    'ci\ud800key',
    'ci\udfff',
    'ci\u202ekey',
    'ci\u202akey',
    'ci\u2066key\u2069',
    'ci\u200ekey',
    'ci\u200f',
    'ci\u061c',
  ];
  for (const name of refused) {
    assert.equal(
      paramOf(() => validateCreate({ name, tier: 'basic' })),
      'name',
      JSON.stringify(name),
    );
    assert.equal(
      paramOf(() => validatePatch({ name })),
      'name',
      JSON.stringify(name),
    );
    assert.equal(isSafeDisplayText(name), false, JSON.stringify(name));
  }
  // Ordinary text of any script, emoji (a well-formed surrogate pair) and joiners stay allowed.
  for (const name of ['Équipe ☕ CI', 'فريق البيانات', 'チーム 🚀', 'a\u200db', 'נתונים 2']) {
    assert.equal(validateCreate({ name, tier: 'basic' }).name, name);
  }
});
