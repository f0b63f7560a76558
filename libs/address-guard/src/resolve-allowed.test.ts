import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SwitchboardError } from '@switchboard/errors';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { AllowedHosts } from './allowed-hosts.js';
import { AllowedPorts } from './allowed-ports.js';
import { dnsServerResolver, HostUnresolvedError, type HostResolver } from './host-resolver.js';
import { resolveAllowed, UrlNotAllowedError } from './resolve-allowed.js';

const none = AllowedHosts.parse([]);

function refusedAs(code: string, reason?: string) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof SwitchboardError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.param, 'url');
    if (reason !== undefined) {
      assert.ok(error instanceof UrlNotAllowedError);
      assert.equal(error.reason, reason);
    }
    return true;
  };
}

let dnsServer: DnsServer;
let resolver: HostResolver;

before(async () => {
  dnsServer = await startDnsServer({
    'public-looking.example': ['127.0.0.1'],
    'public.example': ['93.184.215.14'],
    'mixed.example': ['93.184.215.14', '10.0.0.7'],
    'v6-mapped.example': ['::ffff:169.254.169.254'],
    'v6-public.example': ['2606:4700::1111'],
  });
  resolver = dnsServerResolver([dnsServer.address], { timeoutMs: 1000, tries: 1 });
});

after(() => dnsServer.close());

test('resolveAllowed: a public-looking name that resolves to loopback is blocked', async () => {
  await assert.rejects(
    resolveAllowed('public-looking.example', 80, { allowed: none, resolver }),
    refusedAs('url_not_allowed', 'loopback'),
  );
});

test('resolveAllowed: one blocked answer among public ones blocks the name', async () => {
  await assert.rejects(
    resolveAllowed('mixed.example', 443, { allowed: none, resolver }),
    refusedAs('url_not_allowed', 'private'),
  );
  await assert.rejects(
    resolveAllowed('V6-MAPPED.example', 443, { allowed: none, resolver }),
    refusedAs('url_not_allowed', 'linkLocal'),
  );
});

test('resolveAllowed: public answers pass, with the address to connect to', async () => {
  assert.deepEqual(await resolveAllowed('public.example', 80, { allowed: none, resolver }), {
    address: '93.184.215.14',
    family: 4,
  });
  assert.deepEqual(await resolveAllowed('v6-public.example', 80, { allowed: none, resolver }), {
    address: '2606:4700::1111',
    family: 6,
  });
});

test('resolveAllowed: an unknown name is HostUnresolvedError', async () => {
  await assert.rejects(
    resolveAllowed('unknown.example', 80, { allowed: none, resolver }),
    HostUnresolvedError,
  );
});

test('resolveAllowed: literals are checked without DNS; localhost never reaches DNS', async () => {
  assert.deepEqual(await resolveAllowed('[2606:4700::1111]', 443, { allowed: none, resolver }), {
    address: '2606:4700::1111',
    family: 6,
  });
  await assert.rejects(
    resolveAllowed('[::1]', 443, { allowed: none, resolver }),
    refusedAs('url_not_allowed'),
  );
  await assert.rejects(
    resolveAllowed('localhost', 80, { allowed: none, resolver }),
    refusedAs('url_not_allowed', 'loopback'),
  );
});

test('resolveAllowed: an allow-listed host:port is resolved but not checked', async () => {
  const allowed = AllowedHosts.parse(['public-looking.example:8080', '127.0.0.1:9']);
  assert.deepEqual(await resolveAllowed('public-looking.example', 8080, { allowed, resolver }), {
    address: '127.0.0.1',
    family: 4,
  });
  await assert.rejects(
    resolveAllowed('public-looking.example', 8081, { allowed, resolver }),
    refusedAs('url_not_allowed'),
  );
  assert.deepEqual(await resolveAllowed('127.0.0.1', 9, { allowed, resolver }), {
    address: '127.0.0.1',
    family: 4,
  });
});

test('resolveAllowed: a public name or address on a port that is not allowed is refused', async () => {
  for (const host of ['public.example', '93.184.215.14']) {
    await assert.rejects(
      resolveAllowed(host, 25, { allowed: none, resolver }),
      refusedAs('url_not_allowed', 'port'),
      host,
    );
  }
  const withSmtp = AllowedHosts.parse([], AllowedPorts.parse(['25']));
  assert.deepEqual(await resolveAllowed('public.example', 25, { allowed: withSmtp, resolver }), {
    address: '93.184.215.14',
    family: 4,
  });
});

test('resolveAllowed: every port is open with AllowedPorts.any(), never a blocked address', async () => {
  const anyPort = AllowedHosts.parse([], AllowedPorts.any());
  assert.deepEqual(await resolveAllowed('public.example', 8443, { allowed: anyPort, resolver }), {
    address: '93.184.215.14',
    family: 4,
  });
  await assert.rejects(
    resolveAllowed('public-looking.example', 8443, { allowed: anyPort, resolver }),
    refusedAs('url_not_allowed', 'loopback'),
  );
});
