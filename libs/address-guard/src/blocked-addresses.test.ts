import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blockedRange } from './blocked-addresses.js';

// address → the range it must be blocked as (null: public, must pass).
const table: [string, string | null][] = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'linkLocal'],
  ['169.254.0.1', 'linkLocal'],
  ['100.64.0.1', 'carrierGradeNat'],
  ['100.127.255.255', 'carrierGradeNat'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'reserved'], // TEST-NET-1
  ['198.51.100.7', 'reserved'], // TEST-NET-2
  ['203.0.113.9', 'reserved'], // TEST-NET-3
  ['198.18.0.1', 'reserved'], // benchmarking
  ['192.88.99.1', 'reserved'], // 6to4 relay anycast
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'linkLocal'],
  ['febf::1', 'linkLocal'],
  ['fc00::1', 'uniqueLocal'],
  ['fd12:3456::1', 'uniqueLocal'],
  ['ff02::1', 'multicast'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:169.254.169.254', 'linkLocal'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:0:192.168.0.1', 'private'], // RFC 6145 IPv4-translated
  ['::127.0.0.1', 'loopback'], // deprecated IPv4-compatible
  ['::10.0.0.1', 'private'],
  ['64:ff9b::127.0.0.1', 'loopback'], // NAT64 well-known prefix
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b:1::1', 'rfc6052'], // NAT64 local-use prefix
  ['2002:7f00:1::1', '6to4'],
  ['2002:808:808::1', '6to4'],
  ['2001:0:4136:e378::1', 'teredo'],
  ['2001:db8::1', 'reserved'], // documentation
  ['2001:2::1', 'benchmarking'],
  ['fec0::1', 'deprecatedSiteLocal'],
  ['100::1', 'discard'],
  ['4000::1', 'reserved'], // outside 2000::/3
  ['not-an-ip', 'invalid'],
  ['', 'invalid'],
  ['127.1', 'invalid'], // classful spellings are never a DNS answer
  ['0x7f.0.0.1', 'invalid'],
  ['8.8.8.8', null],
  ['1.1.1.1', null],
  ['93.184.215.14', null],
  ['2606:4700::1111', null],
  ['2a00:1450:4001:80b::200e', null],
  ['::ffff:8.8.8.8', null],
  ['64:ff9b::808:808', null],
];

for (const [address, expected] of table) {
  test(`${address || '(empty)'} → ${expected ?? 'public'}`, () => {
    assert.equal(blockedRange(address), expected);
  });
}
