import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SwitchboardError } from '@switchboard/errors';
import type { HostResolver } from '@switchboard/address-guard';
import { WebhookTargets } from './target-check.js';

// Literal addresses never reach a resolver; names are checked against a real DNS server in
// test/integration/gateway-webhooks-api.test.ts.
const noLookups: HostResolver = {
  resolve: (hostname) => Promise.reject(new Error(`unexpected lookup of ${hostname}`)),
};

function refused(code: string, reason?: string) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof SwitchboardError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.param, 'url');
    if (reason !== undefined) assert.equal((error as { reason?: string }).reason, reason);
    return true;
  };
}

test('a loopback, private or metadata literal is refused on any scheme and port', async () => {
  const targets = new WebhookTargets([], noLookups);
  for (const url of [
    'https://127.0.0.1/hook',
    'https://127.0.0.1:8443/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]:9000/',
  ]) {
    await assert.rejects(targets.check(url), refused('url_not_allowed'), url);
  }
});

test('http:// is refused unless the host is exempt, and then allowed on its port', async () => {
  await assert.rejects(
    new WebhookTargets([], noLookups).check('http://93.184.215.14/hook'),
    refused('url_not_allowed', 'scheme'),
  );
  const exempt = new WebhookTargets(['127.0.0.1:4000'], noLookups);
  assert.equal(await exempt.check('http://127.0.0.1:4000/hook'), 'http://127.0.0.1:4000/hook');
  // The exemption is for that port only: another port is neither exempt nor allowed http.
  await assert.rejects(exempt.check('http://127.0.0.1:4001/hook'), refused('url_not_allowed', 'scheme'));
  await assert.rejects(exempt.check('https://127.0.0.1:4001/hook'), refused('url_not_allowed', 'loopback'));
});

test('a public literal on https is accepted on any port', async () => {
  const targets = new WebhookTargets([], noLookups);
  assert.equal(await targets.check('https://93.184.215.14:8443/a?b=c'), 'https://93.184.215.14:8443/a?b=c');
});

test('credentials in the URL are refused, even for an exempt host', async () => {
  const targets = new WebhookTargets(['127.0.0.1'], noLookups);
  await assert.rejects(
    targets.check('http://user:pw@127.0.0.1/hook'),
    refused('url_not_allowed', 'credentials'),
  );
  await assert.rejects(
    targets.check('https://user@93.184.215.14/hook'),
    refused('url_not_allowed', 'credentials'),
  );
});

test('other schemes and what is not a URL are refused', async () => {
  const targets = new WebhookTargets([], noLookups);
  await assert.rejects(targets.check('ftp://93.184.215.14/'), refused('url_not_allowed', 'scheme'));
  await assert.rejects(targets.check('not a url'), refused('invalid_request'));
});
