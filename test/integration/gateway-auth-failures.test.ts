// Security: failed logins by others never lock out a valid key. Behind an ingress every
// client shares one address, so per-address failure limiting must refuse only failures; the
// admin token has its own, stricter budget. X-Forwarded-For hops with a port are read right, and
// IPv6 clients are limited per /64.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
let key: CreatedKey;
let behindProxy: CreatedKey;

before(async () => {
  stack = await startStack({
    env: {
      AUTH_FAILURES_PER_MINUTE: '5',
      ADMIN_AUTH_FAILURES_PER_MINUTE: '3',
      TRUSTED_PROXIES: '127.0.0.1/32',
    },
  });
  key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
  behindProxy = await createKey(stack.gateway, {
    ip_allowlist: ['198.51.100.0/24'],
    rate_limit_per_minute: 10_000,
  });
});
after(() => stack?.stop());

const models = (headers: Record<string, string>) => fetch(`${stack.gateway.url}/models`, { headers });
const wrongKey = `sb_zzzzzzzzzzzz_${'a'.repeat(33)}`;

/** Sends bad credentials until the gateway answers 429; returns how many it took. */
async function exhaust(send: () => Promise<Response>, limit: number): Promise<number> {
  for (let i = 1; i <= limit * 3; i++) {
    const res = await send();
    if (res.status === 429) {
      assert.equal((await errorOf(res)).code, 'rate_limited');
      return i;
    }
    assert.equal(res.status, 401);
    await res.body?.cancel();
  }
  return assert.fail('failures were never limited');
}

test('after others exhaust the address, a correct key and the admin token still work', async () => {
  await exhaust(() => models(bearer(wrongKey)), 5);
  assert.equal((await models(bearer(wrongKey))).status, 429, 'bad keys from this address stay refused');
  const valid = await models(bearer(key.key));
  assert.equal(valid.status, 200, 'a correct key is never refused for others’ failures');
  assert.equal((await admin(stack.gateway, 'GET', '/keys')).status, 200, 'nor the admin token');
});

test('the admin token has its own stricter failure budget', async () => {
  const wrongAdmin = () =>
    fetch(`${stack.gateway.url}/admin/api/keys`, { headers: bearer('not-the-admin-token-0000000000') });
  const tries = await exhaust(wrongAdmin, 3);
  assert.equal(tries, 4, 'three wrong admin tokens, then 429');
  assert.equal((await admin(stack.gateway, 'GET', '/keys')).status, 200, 'the right token still works');
});

test('an X-Forwarded-For hop written with a port is the client address', async () => {
  for (const hop of ['198.51.100.7:4711', '198.51.100.7', '[::ffff:198.51.100.7]:80']) {
    const res = await models({ ...bearer(behindProxy.key), 'x-forwarded-for': hop });
    assert.equal(res.status, 200, `${hop}: ${await res.text()}`);
  }
  const outside = await models({ ...bearer(behindProxy.key), 'x-forwarded-for': '203.0.113.9:4711' });
  assert.equal(outside.status, 403);
});

test('IPv6 clients are limited per /64, not per address', async () => {
  let n = 0;
  const fromSameNetwork = () =>
    models({ ...bearer(wrongKey), 'x-forwarded-for': `2001:db8:0:1::${(++n).toString(16)}` });
  const tries = await exhaust(fromSameNetwork, 5);
  assert.equal(tries, 6, 'five failures spread over one /64, then 429');
  const otherNetwork = await models({ ...bearer(wrongKey), 'x-forwarded-for': '2001:db8:0:2::1' });
  assert.equal(otherNetwork.status, 401, 'another /64 has its own budget');
  const valid = await models({ ...bearer(key.key), 'x-forwarded-for': '2001:db8:0:1::99' });
  assert.equal(valid.status, 200);
});
