import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SwitchboardError } from '@switchboard/errors';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { AllowedHosts } from './allowed-hosts.js';
import { AllowedPorts } from './allowed-ports.js';
import { dnsServerResolver, HostUnresolvedError, type HostResolver } from './host-resolver.js';
import { checkNavigationUrl, resolveAllowed, UrlNotAllowedError } from './url-policy.js';

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

test('only http and https URLs may be opened', () => {
  for (const url of [
    'file:///etc/passwd',
    ' FILE:///etc/passwd',
    'view-source:http://example.com',
    'chrome://settings',
    'javascript:alert(1)',
    'data:text/html,x',
    'about:blank',
    'ftp://example.com/',
    'ws://example.com/',
    'blob:https://example.com/uuid',
  ]) {
    assert.throws(() => checkNavigationUrl(url, none), refusedAs('url_not_allowed', 'scheme'), url);
  }
});

test('blocked address literals are refused, in every spelling the URL parser accepts', () => {
  const cases: [string, string][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0x7f.1/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.1:8080/', 'loopback'],
    ['http://%31%32%37.0.0.1/', 'loopback'],
    ['HTTP://127.0.0.1./', 'loopback'],
    ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['http://10.0.0.1/', 'private'],
    ['https://[fd00::1]/', 'uniqueLocal'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://localhost/', 'loopback'],
    ['http://LOCALHOST.:3000/', 'loopback'],
    ['http://a.localhost/', 'loopback'],
  ];
  for (const [url, reason] of cases) {
    assert.throws(() => checkNavigationUrl(url, none), refusedAs('url_not_allowed', reason), url);
  }
});

test('credentials in the URL are refused', () => {
  assert.throws(
    () => checkNavigationUrl('http://user:pw@example.com', none),
    refusedAs('url_not_allowed', 'credentials'),
  );
  assert.throws(() => checkNavigationUrl('https://user@example.com/', none), refusedAs('url_not_allowed'));
});

test('a string that is not a URL is invalid_request', () => {
  for (const raw of ['', '   ', 'example.com', 'http://', 'http://[::1/']) {
    assert.throws(() => checkNavigationUrl(raw, none), refusedAs('invalid_request'), raw);
  }
});

test('public URLs pass and come back parsed', () => {
  const url = checkNavigationUrl('  https://Example.com/a?b=1  ', none);
  assert.equal(url.href, 'https://example.com/a?b=1');
  assert.equal(checkNavigationUrl('http://93.184.215.14:443/', none).port, '443');
  assert.equal(checkNavigationUrl('http://[2606:4700::1111]/', none).hostname, '[2606:4700::1111]');
});

test('an allow-listed host:port passes, only on that port', () => {
  const allowed = AllowedHosts.parse(['127.0.0.1:4567', 'localhost']);
  assert.equal(checkNavigationUrl('http://127.0.0.1:4567/page', allowed).pathname, '/page');
  assert.ok(checkNavigationUrl('http://2130706433:4567/', allowed));
  assert.throws(() => checkNavigationUrl('http://127.0.0.1:4568/', allowed), refusedAs('url_not_allowed'));
  assert.throws(() => checkNavigationUrl('http://127.0.0.1/', allowed), refusedAs('url_not_allowed'));
  assert.ok(checkNavigationUrl('http://localhost/', allowed));
  assert.throws(() => checkNavigationUrl('http://a.localhost/', allowed), refusedAs('url_not_allowed'));
});

test('only ports 80 and 443 by default: an allowed host on port 25 is refused, the address judged first', () => {
  for (const url of ['http://example.com:25/', 'https://example.com:8443/', 'http://93.184.215.14:22/']) {
    assert.throws(() => checkNavigationUrl(url, none), refusedAs('url_not_allowed', 'port'), url);
  }
  assert.throws(
    () => checkNavigationUrl('http://127.0.0.1:25/', none),
    refusedAs('url_not_allowed', 'loopback'),
  );
  // An entry without a port exempts the host's address, not every port of it.
  const hostOnly = AllowedHosts.parse(['pages.test']);
  assert.ok(checkNavigationUrl('https://pages.test/', hostOnly));
  assert.throws(
    () => checkNavigationUrl('http://pages.test:25/', hostOnly),
    refusedAs('url_not_allowed', 'port'),
  );
});

test('BROWSER_ALLOWED_PORTS opens more ports on every allowed host, never a blocked address', () => {
  const allowed = AllowedHosts.parse(['pages.test'], AllowedPorts.parse(['25', ' 8080 ', '']));
  assert.equal(checkNavigationUrl('http://example.com:25/', allowed).port, '25');
  assert.equal(checkNavigationUrl('http://pages.test:8080/', allowed).port, '8080');
  assert.ok(checkNavigationUrl('http://example.com/', allowed), 'the web ports stay');
  assert.throws(
    () => checkNavigationUrl('http://example.com:26/', allowed),
    refusedAs('url_not_allowed', 'port'),
  );
  assert.throws(
    () => checkNavigationUrl('http://10.0.0.1:25/', allowed),
    refusedAs('url_not_allowed', 'private'),
  );
});

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
