import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KeyRecord } from '@switchboard/keys';
import { CidrSet } from '../http/client-ip.js';
import { AccessCheck } from './access.js';

const key = (ip_allowlist: string[]): KeyRecord => ({
  id: 'abcdefghijkl',
  name: 'k',
  tier: 'basic',
  ip_allowlist,
  rate_limit_per_minute: null,
  created_at: '2026-01-01T00:00:00.000Z',
  status: 'active',
  prefix: 'sb_abcdefghijkl_abcd',
  secrets: [],
});

test('one verdict, in order: cluster list, staleness, key, key list', () => {
  let record: KeyRecord | null = key([]);
  let fresh = true;
  const access = new AccessCheck(
    { authenticate: (token) => (token === 'good' ? record : null) },
    { keysFresh: () => fresh },
    new CidrSet(['10.0.0.0/8']),
  );
  const code = (token: string | undefined, ip = '10.1.2.3') => access.check(token, ip).error?.code;
  assert.equal(access.check('good', '10.1.2.3').key?.id, 'abcdefghijkl');
  assert.equal(code('good', '192.0.2.1'), 'ip_not_allowed', 'the cluster list comes first');
  assert.equal(code('bad', '192.0.2.1'), 'ip_not_allowed');
  assert.equal(code(undefined), 'unauthorized');
  assert.equal(code('bad'), 'unauthorized');
  record = key(['10.9.0.0/16']);
  assert.equal(code('good'), 'ip_not_allowed', "then the key's own list");
  assert.equal(code('good', '10.9.1.1'), undefined);
  fresh = false;
  const stale = access.check('good', '10.9.1.1').error;
  assert.equal(stale?.code, 'unavailable', 'a stale key store vouches for no key');
  assert.ok(stale.retryAfterSeconds);
  record = null;
  assert.equal(code('good'), 'unavailable');
});

test('an empty cluster list allows every address', () => {
  const access = new AccessCheck({ authenticate: () => key([]) }, { keysFresh: () => true }, new CidrSet([]));
  assert.equal(access.clusterAllows('203.0.113.9'), true);
  assert.ok(access.check('any', '2001:db8::1').key);
});
