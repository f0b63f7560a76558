import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { LOOPBACK_ALIAS, startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { errorOf } from '../support/stack.js';

/**
 * The address guard (docs/browser-sessions.md): nothing but the allow-listed test
 * site may be reached, whatever the spelling, redirect or sub-request; and the "internal" server
 * below, on loopback but not allow-listed, must never see a single request.
 */
describe('browser address guard', { timeout: 180_000 }, () => {
  let stack: BrowserStack;
  let key: CreatedKey;
  let sessionId: string;
  let internal: Server;
  let internalPort: number;
  const internalHits: string[] = [];

  before(async () => {
    internal = createServer((req, res) => {
      internalHits.push(req.url ?? '');
      res.end('secret');
    });
    internal.listen(0, '127.0.0.1');
    await once(internal, 'listening');
    internalPort = (internal.address() as AddressInfo).port;
    stack = await startBrowserStack();
    key = await createKey(stack.gateway, { tier: 'professional' });
    const res = await post('/session/create', {});
    sessionId = ((await res.json()) as { session_id: string }).session_id;
  });
  after(async () => {
    await stack?.stop();
    internal?.closeAllConnections();
    internal?.close();
  });

  function post(path: string, body: unknown): Promise<Response> {
    return fetch(`${stack.gateway.url}/api/browser${path}`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  }
  const navigate = (url: string) => post(`/session/${sessionId}/navigate`, { url });

  async function assertRefused(url: string): Promise<void> {
    const res = await navigate(url);
    assert.equal(res.status, 400, `${url} → ${res.status}`);
    const error = await errorOf(res);
    assert.equal(error.code, 'url_not_allowed', url);
    assert.equal(error.param, 'url');
    assert.ok(!error.message.includes('127.0.0.1'), 'the resolved address is not revealed');
  }

  it('refuses every non-web scheme', async () => {
    for (const url of [
      'file:///etc/passwd',
      ' FILE:///etc/passwd',
      'view-source:http://example.com/',
      'chrome://settings',
      'javascript:alert(1)',
      'data:text/html,<h1>hi</h1>',
      'about:blank',
      'ftp://example.com/',
    ]) {
      await assertRefused(url);
    }
  });

  it('refuses internal addresses however they are spelled', async () => {
    const p = internalPort;
    for (const url of [
      `http://127.0.0.1:${p}/`,
      `http://[::1]:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://2130706433:${p}/`,
      `http://0x7f.1:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://localhost:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'http://224.0.0.1/',
      `http://user:pw@${stack.site.host}/form`,
    ]) {
      await assertRefused(url);
    }
    assert.deepEqual(internalHits, []);
  });

  it('refuses a public-looking name that resolves to loopback', async () => {
    await assertRefused(`http://${LOOPBACK_ALIAS}:${internalPort}/`);
    assert.deepEqual(internalHits, []);
  });

  it('refuses an allowed page that redirects to an internal address, fetching nothing from it', async () => {
    for (const target of [
      `http://127.0.0.1:${internalPort}/via-redirect`,
      `http://${LOOPBACK_ALIAS}:${internalPort}/x`,
    ]) {
      await assertRefused(`${stack.site.origin}/redirect?to=${encodeURIComponent(target)}`);
    }
    assert.deepEqual(internalHits, []);
    const details = (await (
      await fetch(`${stack.gateway.url}/api/browser/session/${sessionId}/details`, {
        headers: bearer(key.key),
      })
    ).json()) as { history: string[] };
    assert.ok(
      details.history.every((url) => url.startsWith(stack.site.origin)),
      `no refused URL in history: ${details.history.join(', ')}`,
    );
  });

  it('loads an allowed page but none of its sub-requests to internal addresses', async () => {
    const blockedBefore = await stack.workers[0]!.metric('browser_blocked_requests_total');
    for (const target of [
      `http://127.0.0.1:${internalPort}/img`,
      `http://${LOOPBACK_ALIAS}:${internalPort}/fetch`,
    ]) {
      const res = await navigate(`${stack.site.origin}/embed?target=${encodeURIComponent(target)}`);
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(((await res.json()) as { title: string }).title, 'Embed');
    }
    // The page's fetch() runs after load; give it a moment to have been refused.
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(internalHits, []);
    assert.ok((await stack.workers[0]!.metric('browser_blocked_requests_total')) > blockedBefore);
  });

  it('still opens the allow-listed site afterwards', async () => {
    const res = await navigate(`${stack.site.origin}/form`);
    assert.equal(res.status, 200);
  });
});
