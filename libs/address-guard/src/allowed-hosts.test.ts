import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AllowedHosts } from './allowed-hosts.js';
import { AllowedPorts } from './allowed-ports.js';

test('an entry without a port exempts the host on every port; with one, only that port', () => {
  const allowed = AllowedHosts.parse(['Pages.Test', '127.0.0.1:8080', '127.0.0.1:8081', ' ', '']);
  assert.equal(allowed.size, 2);
  assert.ok(allowed.allows('pages.test', 80));
  assert.ok(allowed.allows('PAGES.TEST.', 443), 'case and a trailing dot do not matter');
  assert.ok(allowed.allows('127.0.0.1', 8080));
  assert.ok(allowed.allows('127.0.0.1', 8081));
  assert.ok(!allowed.allows('127.0.0.1', 80));
  assert.ok(!allowed.allows('127.0.0.2', 8080));
  assert.ok(!allowed.allows('sub.pages.test', 80), 'no implicit subdomains');
  assert.ok(allowed.allows('2130706433', 8080), 'numeric IPv4 spellings are the same host');
});

test('IPv6 entries, bracketed or bare, match any spelling of the address', () => {
  const allowed = AllowedHosts.parse(['[::1]:9000', '0:0:0:0:0:0:0:2', '[fd00::3]']);
  assert.ok(allowed.allows('[::1]', 9000));
  assert.ok(allowed.allows('0::1', 9000));
  assert.ok(!allowed.allows('::1', 9001));
  assert.ok(allowed.allows('::2', 1));
  assert.ok(allowed.allows('[FD00:0::3]', 443));
});

test('a host entry with a port keeps the port, even the default one', () => {
  const allowed = AllowedHosts.parse(['example.test:80']);
  assert.ok(allowed.allows('example.test', 80));
  assert.ok(!allowed.allows('example.test', 443));
});

test('malformed entries are refused, naming the entry', () => {
  for (const entry of [
    'host:',
    'host:0',
    'host:65536',
    'host:http',
    'http://host',
    'user@host',
    'host/path',
    '*.example.com',
    '[::1',
    '::1:80:x',
    'a b',
    '[not-v6]:80',
  ]) {
    assert.throws(() => AllowedHosts.parse([entry]), new RegExp(`malformed entry "${escape(entry)}"`), entry);
  }
});

test('an empty list allows nothing', () => {
  const none = AllowedHosts.parse([]);
  assert.ok(!none.allows('127.0.0.1', 80));
  assert.equal(new AllowedHosts().size, 0);
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

test('ports: 80 and 443, the operator ports, and the port of an entry naming the host', () => {
  const allowed = AllowedHosts.parse(['pages.test', '127.0.0.1:8080'], AllowedPorts.parse(['25']));
  assert.ok(allowed.allowsPort('anywhere.example', 443));
  assert.ok(allowed.allowsPort('anywhere.example', 25));
  assert.ok(!allowed.allowsPort('anywhere.example', 8080), 'an entry opens its port for its own host only');
  assert.ok(allowed.allowsPort('127.0.0.1', 8080));
  assert.ok(!allowed.allowsPort('pages.test', 8080), 'an entry without a port opens none');
  assert.ok(!new AllowedHosts().allowsPort('pages.test', 25));
});
