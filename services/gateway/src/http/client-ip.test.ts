import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CidrSet, clientIp, failureBucket, normalizeIp } from './client-ip.js';

test('normalizes IPv4-mapped IPv6, brackets and zones', () => {
  assert.equal(normalizeIp('::ffff:10.1.2.3'), '10.1.2.3');
  assert.equal(normalizeIp('[2001:db8::1]'), '2001:db8::1');
  assert.equal(normalizeIp('fe80::1%eth0'), 'fe80::1');
});

test('CIDR sets match IPv4, IPv6, bare hosts and mapped addresses', () => {
  const set = new CidrSet(['10.0.0.0/8', '2001:db8::/32', '192.0.2.1', '::ffff:198.51.100.0/120']);
  assert.ok(set.has('10.200.0.1'));
  assert.ok(set.has('::ffff:10.0.0.5'));
  assert.ok(set.has('2001:db8:ffff::1'));
  assert.ok(set.has('192.0.2.1'));
  assert.ok(!set.has('192.0.2.2'));
  assert.ok(set.has('198.51.100.77'));
  assert.ok(!set.has('11.0.0.1'));
  assert.ok(!set.has('not an ip'));
  assert.ok(new CidrSet([]).empty);
});

test('X-Forwarded-For counts only behind a trusted proxy, right-most untrusted hop wins', () => {
  const trusted = new CidrSet(['127.0.0.1/32', '10.0.0.0/8']);
  const none = new CidrSet([]);
  assert.equal(
    clientIp('203.0.113.5', '192.0.2.1', trusted),
    '203.0.113.5',
    'untrusted peer: header ignored',
  );
  assert.equal(clientIp('127.0.0.1', '192.0.2.1', none), '127.0.0.1', 'no trusted proxies: header ignored');
  assert.equal(clientIp('::ffff:127.0.0.1', '192.0.2.1', trusted), '192.0.2.1');
  assert.equal(clientIp('127.0.0.1', '1.1.1.1, 192.0.2.1', trusted), '192.0.2.1', 'spoofed left hop ignored');
  assert.equal(clientIp('127.0.0.1', '192.0.2.1, 10.0.0.7', trusted), '192.0.2.1', 'trusted hops skipped');
  assert.equal(clientIp('127.0.0.1', '10.0.0.8, 10.0.0.7', trusted), '10.0.0.8', 'all trusted: left-most');
  assert.equal(clientIp('127.0.0.1', 'garbage, 192.0.2.1', trusted), '192.0.2.1');
  assert.equal(
    clientIp('127.0.0.1', '192.0.2.1, garbage', trusted),
    '127.0.0.1',
    'unparseable hop: stop at the proxy',
  );
  assert.equal(clientIp('127.0.0.1', '[2001:db8::1]', trusted), '2001:db8::1');
});

test('X-Forwarded-For hops written with a port count as their address', () => {
  const trusted = new CidrSet(['127.0.0.1/32']);
  assert.equal(normalizeIp('203.0.113.5:4711'), '203.0.113.5');
  assert.equal(normalizeIp('[2001:db8::1]:4711'), '2001:db8::1');
  assert.equal(clientIp('127.0.0.1', '198.51.100.9:52100', trusted), '198.51.100.9');
  assert.equal(clientIp('127.0.0.1', '[2001:db8::7]:443, 127.0.0.1:8080', trusted), '2001:db8::7');
  assert.equal(normalizeIp('2001:db8::1'), '2001:db8::1', 'a bare IPv6 address is not read as having a port');
});

test('failures are counted per IPv4 address and per IPv6 /64', () => {
  assert.equal(failureBucket('203.0.113.5'), '203.0.113.5');
  assert.equal(failureBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(failureBucket('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.notEqual(failureBucket('2001:db8:1:3::1'), failureBucket('2001:db8:1:2::1'));
  assert.equal(failureBucket('::1'), '0:0:0:0::/64');
});
