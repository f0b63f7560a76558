/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-return --
   Raw CDP replies are untyped JSON; these tests read them as an attacker's raw client would. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { freePort } from '@switchboard/devcluster';
import { CLUSTER_SECRET_KEY } from '@switchboard/grpc';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { testClusterSecret } from '../support/gateway.js';

interface Reply {
  id?: number;
  sessionId?: string;
  result?: Record<string, any>;
  error?: { code: number; message: string };
  method?: string;
  params?: Record<string, any>;
}

/** A raw CDP client (the `ws` package), as an attacker would write one. */
async function rawClient(url: string, headers: Record<string, string>) {
  const ws = new WebSocket(url, { headers, perMessageDeflate: false });
  await once(ws, 'open');
  const replies: Reply[] = [];
  ws.on('message', (data: Buffer) => replies.push(JSON.parse(data.toString()) as Reply));
  let nextId = 0;
  const reply = async (id: number | undefined, extra?: (r: Reply) => boolean) => {
    for (const end = Date.now() + 15_000; Date.now() < end;) {
      const found = replies.find(
        (r) => (id === undefined ? r.error && r.id === undefined : r.id === id) && (extra?.(r) ?? true),
      );
      if (found) return found;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no reply to ${id}`);
  };
  const send = async (method: string, params: object = {}, sessionId?: string) => {
    const id = ++nextId;
    ws.send(JSON.stringify({ id, method, params, sessionId }));
    return reply(id);
  };
  return { ws, send, reply, replies };
}

const refused = (r: Reply) => {
  assert.ok(r.error, `refused: ${JSON.stringify(r)}`);
  assert.equal(r.error.code, -32000);
  assert.match(r.error.message, /^Refused by Switchboard: /);
};

describe(
  'DevTools relay: stays inside the session and the guard, and never takes the worker down',
  { timeout: 240_000 },
  () => {
    let stack: BrowserStack;
    let owner: CreatedKey;
    let devtoolsPort: number;
    let counting: Server;
    let hits: string[];
    let countingOrigin: string;

    before(async () => {
      devtoolsPort = await freePort();
      stack = await startBrowserStack({ workerEnv: { DEVTOOLS_PORT: String(devtoolsPort) } });
      owner = await createKey(stack.gateway, { tier: 'professional' });
      // A server on loopback that only a way around the address guard could reach.
      hits = [];
      counting = createServer((req, res) => {
        hits.push(req.url ?? '');
        res.end('reached');
      });
      counting.listen(0, '127.0.0.1');
      await once(counting, 'listening');
      countingOrigin = `http://127.0.0.1:${(counting.address() as AddressInfo).port}`;
    });
    after(async () => {
      counting?.close();
      await stack?.stop();
    });

    const session = async () => {
      const res = await fetch(`${stack.gateway.url}/api/browser/session/create`, {
        method: 'POST',
        headers: bearer(owner.key),
      });
      assert.equal(res.status, 201);
      return (await res.json()) as { session_id: string; devtools_url: string };
    };
    /** The worker still serves sessions: a new one navigates its test page. */
    const workerServes = async () => {
      const { session_id } = await session();
      const res = await fetch(`${stack.gateway.url}/api/browser/session/${session_id}/navigate`, {
        method: 'POST',
        headers: { ...bearer(owner.key), 'content-type': 'application/json' },
        body: JSON.stringify({ url: `${stack.site.origin}/hello` }),
      });
      assert.equal(res.status, 200, await res.text());
      await fetch(`${stack.gateway.url}/api/browser/session/${session_id}/close`, {
        method: 'POST',
        headers: bearer(owner.key),
      });
      assert.equal(stack.workers[0]!.child.exitCode, null, 'the worker is still running');
    };

    it('refuses a context with its own proxy, file: and chrome: targets and navigations, with a CDP error', async () => {
      const { devtools_url } = await session();
      const client = await rawClient(devtools_url, bearer(owner.key));
      try {
        refused(await client.send('Target.createBrowserContext', { proxyServer: 'direct://' }));
        refused(await client.send('Target.createTarget', { url: `${countingOrigin}/around-the-proxy` }));
        refused(await client.send('Target.createTarget', { url: 'file:///etc/hostname' }));
        refused(await client.send('Target.exposeDevToolsProtocol', { targetId: 'x' }));
        refused(await client.send('SystemInfo.getInfo'));
        const created = await client.send('Target.createTarget', { url: 'about:blank' });
        const attached = await client.send('Target.attachToTarget', {
          targetId: created.result!.targetId,
          flatten: true,
        });
        const sessionId = attached.result!.sessionId as string;
        for (const url of [
          'file:///etc/hostname',
          'chrome://version',
          'chrome-extension://abc/x',
          'devtools://devtools/bundled/inspector.html',
          'view-source:file:///etc/hostname',
        ]) {
          const r = await client.send('Page.navigate', { url }, sessionId);
          refused(r);
          assert.equal(r.sessionId, sessionId, 'a flattened session message is answered on its session');
        }
        refused(
          await client.send('DOM.setFileInputFiles', { files: ['/etc/hostname'], nodeId: 1 }, sessionId),
        );
        // Malformed input gets a CDP error too, and the connection stays open.
        client.ws.send('{not json');
        assert.equal((await client.reply(undefined)).error!.code, -32700);
        const fine = await client.send(
          'Runtime.evaluate',
          { expression: '6 * 7', returnByValue: true },
          sessionId,
        );
        assert.equal(fine.result!.result.value, 42);
        assert.deepEqual(hits, []);
      } finally {
        client.ws.close();
      }
    });

    it('forwards any download behaviour as deny: nothing lands in the path a client names', async () => {
      const { devtools_url } = await session();
      const client = await rawClient(devtools_url, bearer(owner.key));
      const downloads = await mkdtemp(join(tmpdir(), 'sb-downloads-'));
      try {
        assert.deepEqual(
          (
            await client.send('Browser.setDownloadBehavior', {
              behavior: 'allow',
              downloadPath: downloads,
              eventsEnabled: true,
            })
          ).result,
          {},
        );
        const created = await client.send('Target.createTarget', { url: 'about:blank' });
        const attached = await client.send('Target.attachToTarget', {
          targetId: created.result!.targetId,
          flatten: true,
        });
        const sessionId = attached.result!.sessionId as string;
        assert.deepEqual(
          (
            await client.send(
              'Page.setDownloadBehavior',
              { behavior: 'allow', downloadPath: downloads },
              sessionId,
            )
          ).result,
          {},
        );
        const navigated = await client.send(
          'Page.navigate',
          { url: `${stack.site.origin}/download` },
          sessionId,
        );
        assert.equal(navigated.result!.isDownload, true);
        await client.reply(undefined, () => false).catch(() => undefined);
        const states = client.replies
          .filter((r) => r.method === 'Browser.downloadProgress')
          .map((r) => r.params!.state);
        assert.ok(states.includes('canceled'), `download cancelled (${states.join(',')})`);
        assert.deepEqual(await readdir(downloads), []);
      } finally {
        client.ws.close();
        await rm(downloads, { recursive: true, force: true });
      }
    });

    it('still serves Playwright: a new page in the session, an allowed page, evaluate, screenshot', async () => {
      const { devtools_url } = await session();
      const browser = await chromium.connectOverCDP(devtools_url, { headers: bearer(owner.key) });
      try {
        const page = await browser.contexts()[0]!.newPage();
        await page.goto(`${stack.site.origin}/form`);
        assert.equal(await page.evaluate('document.title'), 'Sign up');
        const png = await page.screenshot();
        assert.equal(png.subarray(1, 4).toString(), 'PNG');
        await assert.rejects(page.goto('file:///etc/hostname'));
      } finally {
        await browser.close();
      }
    });

    const relayUpgrade = (headers: Record<string, string>, sessionId: string) =>
      new WebSocket(`ws://127.0.0.1:${devtoolsPort}/devtools/${sessionId}`, {
        headers: { 'x-switchboard-key-id': owner.id, ...headers },
        perMessageDeflate: false,
      });

    it('refuses relay upgrades without the cluster secret, or with a wrong one', async () => {
      const { session_id } = await session();
      for (const headers of [
        {},
        { [CLUSTER_SECRET_KEY]: 'wrong-secret-0123456789abcdef0123456789' },
      ] as Record<string, string>[]) {
        const socket = relayUpgrade(headers, session_id);
        socket.on('error', () => undefined);
        const [, res] = (await once(socket, 'unexpected-response')) as [unknown, IncomingMessage];
        assert.equal(res.statusCode, 401);
        let body = '';
        for await (const chunk of res) body += String(chunk);
        assert.equal((JSON.parse(body) as { error: { code: string } }).error.code, 'unauthorized');
        socket.terminate();
      }
      const ok = relayUpgrade({ [CLUSTER_SECRET_KEY]: testClusterSecret }, session_id);
      await once(ok, 'open');
      ok.close();
    });

    it('survives a TCP reset, a half-open client, a garbage frame and an oversized message', async () => {
      const { session_id } = await session();
      const upgradeRequest =
        `GET /devtools/${session_id} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n` +
        `x-switchboard-key-id: ${owner.id}\r\n${CLUSTER_SECRET_KEY}: ${testClusterSecret}\r\n\r\n`;
      const raw = async () => {
        const socket = connect(devtoolsPort, '127.0.0.1');
        socket.on('error', () => undefined);
        await once(socket, 'connect');
        return socket;
      };
      // A reset right after the upgrade request, while the relay connects to the browser.
      for (let i = 0; i < 5; i++) {
        const socket = await raw();
        socket.write(upgradeRequest);
        socket.resetAndDestroy();
      }
      // A garbage frame after a completed upgrade (unmasked, reserved opcode).
      const garbage = await raw();
      garbage.write(upgradeRequest);
      await once(garbage, 'data');
      garbage.write(Buffer.from([0x8b, 0x05, 1, 2, 3, 4, 5]));
      await once(garbage, 'close');
      // Half-open: a client that upgrades and then neither reads nor answers.
      const halfOpen = await raw();
      halfOpen.write(upgradeRequest);
      halfOpen.pause();
      // An oversized message closes only its own connection (1009).
      const big = relayUpgrade({ [CLUSTER_SECRET_KEY]: testClusterSecret }, session_id);
      await once(big, 'open');
      big.on('error', () => undefined);
      big.send(
        JSON.stringify({
          id: 1,
          method: 'Runtime.evaluate',
          params: { expression: 'x'.repeat(17 * 1024 * 1024) },
        }),
      );
      const [code] = (await once(big, 'close')) as [number];
      // 1009 when the close frame arrives; 1006 when the relay's reset of a connection still
      // sending overtakes it. Either way the message never reached the browser (the old relay
      // forwarded it and kept the connection open).
      assert.ok(code === 1009 || code === 1006, `closed with ${code}`);

      await workerServes();
      // The session the bad clients used is still usable over DevTools.
      const client = await rawClient(`ws://127.0.0.1:${devtoolsPort}/devtools/${session_id}`, {
        'x-switchboard-key-id': owner.id,
        [CLUSTER_SECRET_KEY]: testClusterSecret,
      });
      assert.ok((await client.send('Browser.getVersion')).result!.product);
      client.ws.close();
      halfOpen.destroy();
    });
  },
);
