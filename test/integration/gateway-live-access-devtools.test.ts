// Open DevTools sockets follow authorisation: each is closed within 2 s, with a WebSocket close
// frame naming the code a new request would get, once its key is revoked (1008 unauthorized),
// once the key's IP allowlist stops matching the client (1008 ip_not_allowed), and once the key
// store has been silent past KEYS_MAX_STALENESS_MS (NATS frozen with SIGSTOP: 1013 unavailable).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { sleep } from '../support/stack.js';

const STALENESS_MS = 2000;

describe('open DevTools sockets follow authorisation', { timeout: 180_000 }, () => {
  let stack: BrowserStack;

  before(async () => {
    stack = await startBrowserStack({ gatewayEnv: { KEYS_MAX_STALENESS_MS: String(STALENESS_MS) } });
  });
  after(async () => {
    stack?.nats.resume();
    await stack?.stop();
  });

  /** A session of `key` and a DevTools socket to it that speaks CDP. */
  async function openDevtools(key: CreatedKey) {
    const created = await fetch(`${stack.gateway.url}/api/browser/session/create`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { session_id } = (await created.json()) as { session_id: string };
    const url = `${stack.gateway.url.replace('http', 'ws')}/api/browser/session/${session_id}/devtools`;
    const socket = new WebSocket(url, { headers: bearer(key.key) });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) =>
      socket.once('close', (code: number, reason: Buffer) =>
        resolve({ code, reason: reason.toString(), at: Date.now() }),
      ),
    );
    const reply = new Promise<{ id: number }>((resolve) =>
      socket.once('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as { id: number })),
    );
    socket.send(JSON.stringify({ id: 1, method: 'Browser.getVersion' }));
    assert.equal((await reply).id, 1, 'the socket speaks CDP');
    return {
      closedWithin: (ms: number) => Promise.race([closed, sleep(ms).then(() => undefined)]),
      /** Closes the session (with the admin token: the key may no longer work). */
      close: () => admin(stack.gateway, 'DELETE', `/browser/sessions/${session_id}`),
    };
  }

  it('revoking the key closes its socket within 2 s with 1008 unauthorized', async () => {
    const key = await createKey(stack.gateway, { tier: 'professional' });
    const devtools = await openDevtools(key);
    assert.equal((await admin(stack.gateway, 'DELETE', `/keys/${key.id}`)).status, 204);
    const closed = await devtools.closedWithin(2000);
    assert.deepEqual(closed && { code: closed.code, reason: closed.reason }, {
      code: 1008,
      reason: 'unauthorized',
    });
    await devtools.close();
  });

  it("an allowlist change that excludes the client closes the key's socket within 2 s with 1008 ip_not_allowed", async () => {
    const key = await createKey(stack.gateway, { tier: 'professional', ip_allowlist: ['127.0.0.1/32'] });
    const devtools = await openDevtools(key);
    const patched = await admin(stack.gateway, 'PATCH', `/keys/${key.id}`, {
      ip_allowlist: ['192.0.2.0/24'],
    });
    assert.equal(patched.status, 200);
    const closed = await devtools.closedWithin(2000);
    assert.deepEqual(closed && { code: closed.code, reason: closed.reason }, {
      code: 1008,
      reason: 'ip_not_allowed',
    });
    await devtools.close();
  });

  it('the staleness bound passing while NATS is frozen closes the socket within 2 s with 1013 unavailable', async () => {
    const key = await createKey(stack.gateway, { tier: 'professional' });
    const devtools = await openDevtools(key);
    stack.nats.pause();
    const pausedAt = Date.now();
    try {
      // NATS last answered at most a ping interval (0.5 s) before the pause: the bound is 1.5 s away.
      assert.equal(await devtools.closedWithin(STALENESS_MS - 1200), undefined, 'closed inside the bound');
      const closed = await devtools.closedWithin(pausedAt + STALENESS_MS + 2000 - Date.now());
      assert.ok(closed, `socket still open ${Date.now() - pausedAt} ms after NATS froze`);
      assert.deepEqual({ code: closed.code, reason: closed.reason }, { code: 1013, reason: 'unavailable' });
    } finally {
      stack.nats.resume();
    }
    for (let i = 0; (await fetch(`${stack.gateway.url}/readyz`)).status !== 200; i++) {
      assert.ok(i < 100, 'ready again after NATS came back');
      await sleep(100);
    }
    await devtools.close();
  });
});
