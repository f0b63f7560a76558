// Security, for DevTools: revoking a key closes its open DevTools sockets within
// 2 s, and `devtools_url` names the address clients really use — wss:// behind a TLS proxy, from
// forwarding headers only when a trusted proxy sent them, or PUBLIC_BASE_URL when configured.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { sleep } from '../support/stack.js';

describe('DevTools access through the gateway', { timeout: 180_000 }, () => {
  let stack: BrowserStack;
  let configured: GatewayProcess;

  before(async () => {
    // The stack's gateway is behind a "proxy" on loopback; a second one has PUBLIC_BASE_URL.
    stack = await startBrowserStack({ gatewayEnv: { TRUSTED_PROXIES: '127.0.0.1/32' } });
    configured = await startGateway({
      ...stack.nats.env('gateway'),
      ...stack.redis.env('gateway'),
      BROWSER_ADDR: stack.workers[0]!.address,
      ...stack.s3.env('switchboard-test'),
      PUBLIC_BASE_URL: 'https://api.example.com/',
    });
  });
  after(async () => {
    await configured?.stop();
    await stack?.stop();
  });

  const createSession = async (
    gateway: GatewayProcess,
    key: CreatedKey,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${gateway.url}/api/browser/session/create`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json', ...headers },
      body: '{}',
    });
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as { session_id: string; devtools_url: string };
  };
  const closeSession = (gateway: GatewayProcess, key: CreatedKey, id: string) =>
    fetch(`${gateway.url}/api/browser/session/${id}/close`, { method: 'POST', headers: bearer(key.key) });

  it('devtools_url is wss:// with the public host behind a trusted TLS proxy', async () => {
    const key = await createKey(stack.gateway, { tier: 'professional' });
    const direct = await createSession(stack.gateway, key);
    const host = new URL(stack.gateway.url).host;
    assert.equal(direct.devtools_url, `ws://${host}/api/browser/session/${direct.session_id}/devtools`);
    await closeSession(stack.gateway, key, direct.session_id);

    const proxied = await createSession(stack.gateway, key, {
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'api.example.com',
      'x-forwarded-for': '203.0.113.10',
    });
    assert.equal(
      proxied.devtools_url,
      `wss://api.example.com/api/browser/session/${proxied.session_id}/devtools`,
    );
    await closeSession(stack.gateway, key, proxied.session_id);

    const configuredSession = await createSession(configured, key, { 'x-forwarded-proto': 'http' });
    assert.equal(
      configuredSession.devtools_url,
      `wss://api.example.com/api/browser/session/${configuredSession.session_id}/devtools`,
    );
    await closeSession(configured, key, configuredSession.session_id);
  });

  it('forwarding headers from a client that is not a trusted proxy are ignored', async () => {
    const key = await createKey(configured, { tier: 'professional' });
    // The configured gateway trusts no proxy; its answer comes from PUBLIC_BASE_URL. Check the
    // untrusted case on a gateway without either setting.
    const plain = await startGateway({
      ...stack.nats.env('gateway'),
      ...stack.redis.env('gateway'),
      BROWSER_ADDR: stack.workers[0]!.address,
      ...stack.s3.env('switchboard-test'),
    });
    try {
      const session = await createSession(plain, key, {
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
      });
      assert.equal(
        session.devtools_url,
        `ws://${new URL(plain.url).host}/api/browser/session/${session.session_id}/devtools`,
      );
      await closeSession(plain, key, session.session_id);
    } finally {
      await plain.stop();
    }
  });

  it('revoking a key closes its open DevTools socket within 2 s; other keys keep theirs', async () => {
    const victim = await createKey(stack.gateway, { tier: 'professional' });
    const bystander = await createKey(stack.gateway, { tier: 'professional' });
    const open = async (key: CreatedKey) => {
      const { session_id } = await createSession(stack.gateway, key);
      const url = `${stack.gateway.url.replace('http', 'ws')}/api/browser/session/${session_id}/devtools`;
      const socket = new WebSocket(url, { headers: bearer(key.key) });
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      return { socket, closed, session_id };
    };
    const victimSocket = await open(victim);
    const bystanderSocket = await open(bystander);

    assert.equal((await admin(stack.gateway, 'DELETE', `/keys/${victim.id}`)).status, 204);
    const closedInTime = await Promise.race([
      victimSocket.closed.then(() => true),
      sleep(2000).then(() => false),
    ]);
    assert.ok(closedInTime, 'the revoked key’s DevTools socket is still open after 2 s');

    // The other key's socket still speaks CDP.
    const reply = new Promise<{ id: number; result?: unknown }>((resolve) =>
      bystanderSocket.socket.once('message', (data: Buffer) =>
        resolve(JSON.parse(data.toString()) as { id: number }),
      ),
    );
    bystanderSocket.socket.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    assert.equal((await reply).id, 1);
    bystanderSocket.socket.close();
    await closeSession(stack.gateway, bystander, bystanderSocket.session_id);
  });
});
