import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SwitchboardError } from '@switchboard/errors';
import { AllowedHosts, AllowedPorts, UrlNotAllowedError } from '@switchboard/address-guard';
import { checkNavigationUrl } from './url-policy.js';

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
