import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

/** GET over a chosen local address family, so tests can come from ::1 or 127.0.0.1. */
function getFrom(host: '127.0.0.1' | '::1', port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host, port, path, headers, family: host === '::1' ? 6 : 4 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('cluster allowlist', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ env: { IP_ALLOWLIST: '::1/128,192.0.2.0/24' } });
  });
  after(() => stack?.stop());

  test('is checked before the key: 127.0.0.1 is refused even without a key', async () => {
    const res = await fetch(`${stack.gateway.url}/models`);
    assert.equal(res.status, 403);
    assert.equal((await errorOf(res)).code, 'ip_not_allowed');
  });

  test('IPv6: ::1 is allowed through to authentication', async () => {
    const res = await getFrom('::1', stack.gateway.port, '/models', {});
    assert.equal(res.status, 401);
  });

  test('probes stay reachable from anywhere', async () => {
    assert.equal((await fetch(`${stack.gateway.url}/healthz`)).status, 200);
  });

  test('X-Forwarded-For from an untrusted peer cannot spoof an allowed address', async () => {
    const res = await fetch(`${stack.gateway.url}/models`, { headers: { 'x-forwarded-for': '192.0.2.7' } });
    assert.equal(res.status, 403);
  });
});

describe('trusted proxies', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      env: { IP_ALLOWLIST: '192.0.2.0/24,2001:db8::/32', TRUSTED_PROXIES: '127.0.0.1/32,10.0.0.0/8' },
    });
  });
  after(() => stack?.stop());

  const viaProxy = (xff: string) =>
    fetch(`${stack.gateway.url}/models`, { headers: { 'x-forwarded-for': xff } });

  test('the forwarded client address is honoured from a trusted proxy', async () => {
    assert.equal((await viaProxy('192.0.2.7')).status, 401); // allowed, then no key
    assert.equal((await viaProxy('2001:db8::1')).status, 401);
    assert.equal((await viaProxy('198.51.100.1')).status, 403);
  });

  test('the right-most untrusted hop counts, not what the client wrote further left', async () => {
    assert.equal((await viaProxy('192.0.2.7, 198.51.100.1')).status, 403);
    assert.equal((await viaProxy('198.51.100.1, 192.0.2.7')).status, 401);
    assert.equal(
      (await viaProxy('198.51.100.1, 192.0.2.7, 10.1.2.3')).status,
      401,
      'trusted hops are skipped',
    );
  });
});

describe('key allowlist', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ env: { TRUSTED_PROXIES: '127.0.0.1/32' } });
  });
  after(() => stack?.stop());

  test("a key's own list applies after authentication, IPv4 and IPv6", async () => {
    const key = await createKey(stack.gateway, { ip_allowlist: ['192.0.2.0/24', '2001:db8:1::/48'] });
    const from = (xff: string) =>
      fetch(`${stack.gateway.url}/models`, { headers: { ...bearer(key.key), 'x-forwarded-for': xff } });
    assert.equal((await from('192.0.2.200')).status, 200);
    assert.equal((await from('2001:db8:1::5')).status, 200);
    const refused = await from('203.0.113.9');
    assert.equal(refused.status, 403);
    assert.equal((await errorOf(refused)).code, 'ip_not_allowed');
    assert.equal((await from('2001:db8:2::5')).status, 403);
  });

  test('a key with an empty list is usable from anywhere', async () => {
    const key = await createKey(stack.gateway);
    const res = await fetch(`${stack.gateway.url}/models`, {
      headers: { ...bearer(key.key), 'x-forwarded-for': '203.0.113.9' },
    });
    assert.equal(res.status, 200);
  });
});
