/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call --
   Raw CDP replies are untyped JSON; these tests read them as an attacker's raw client would. */
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { createLogger } from '@switchboard/telemetry';
import { AllowedHosts, systemResolver } from '@switchboard/address-guard';
import { screenshot } from '../sessions/page-actions.js';
import { PooledBrowser } from './pooled-browser.js';
import { prepareChromiumIsolation } from './sandbox-check.js';

/**
 * Chromium's own layer, reached around the relay: a raw CDP client on the pooled browser's own
 * endpoint (as a client that got past the relay's policy would be) still cannot read local files,
 * download, route around the guard's proxy or send UDP, and every page is behind the second layer.
 * Needs the managed policy installed (deploy/local/setup.mjs).
 */

interface Message {
  id?: number;
  method?: string;
  sessionId?: string;
  params?: Record<string, any>;
  result?: Record<string, any>;
  error?: { message: string };
}

async function rawCdp(url: string) {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, 'open');
  const events: Message[] = [];
  const pending = new Map<number, (m: Message) => void>();
  let nextId = 0;
  ws.on('message', (data: Buffer) => {
    const m = JSON.parse(data.toString()) as Message;
    if (m.id !== undefined && pending.has(m.id)) pending.get(m.id)!(m);
    else events.push(m);
  });
  const send = (method: string, params: object = {}, sessionId?: string) =>
    new Promise<Message>((resolve) => {
      const id = ++nextId;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params, sessionId }));
    });
  /** Polls `check` until it holds, within a generous bound. */
  const until = async (what: string, check: () => boolean | Promise<boolean>) => {
    for (const end = Date.now() + 15_000; Date.now() < end;) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`timed out waiting for ${what}`);
  };
  const page = async (url: string, browserContextId?: string) => {
    const created = await send('Target.createTarget', { url: 'about:blank', browserContextId });
    const targetId = created.result!.targetId as string;
    const attached = await send('Target.attachToTarget', { targetId, flatten: true });
    const sessionId = attached.result!.sessionId as string;
    await send('Network.enable', {}, sessionId);
    const navigated = await send('Page.navigate', { url }, sessionId);
    const evaluate = async (expression: string) =>
      (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId))
        .result?.result?.value as unknown;
    return { sessionId, navigated, evaluate };
  };
  return { send, events, until, page, close: () => ws.terminate() };
}

async function listen(
  handler: Parameters<typeof createServer>[1],
): Promise<{ server: Server; host: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler!(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, host: `127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

describe('Chromium layer (no relay in front)', { timeout: 120_000 }, () => {
  let browser: PooledBrowser;
  let site: Awaited<ReturnType<typeof listen>>;
  let elsewhere: Awaited<ReturnType<typeof listen>>;
  let profileRoot: string;
  const blocked: string[] = [];

  before(async () => {
    profileRoot = await mkdtemp(join(tmpdir(), 'sb-chromium-layer-'));
    // Chromium's own user (when the test runs as root) must reach the profiles under it.
    await chmod(profileRoot, 0o711);
    site = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://site');
      if (url.pathname === '/download') {
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename=x.bin',
        });
        return res.end('payload');
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      const target = url.searchParams.get('target');
      res.end(target === null ? '<title>ok</title>ok' : `<img src="${target}">`);
    });
    // Not allow-listed: only a way around the guard could reach it.
    elsewhere = await listen((_req, res) => res.end('reached'));
    const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
    const logger = createLogger({ service: 'test', level: 'warn' });
    browser = await PooledBrowser.launch({
      chromiumPath,
      profileRoot,
      allowed: AllowedHosts.parse([site.host]),
      resolver: systemResolver(),
      // As the worker starts it: sandboxed, as its own user when this runs as root.
      isolation: await prepareChromiumIsolation({
        chromiumPath,
        profileRoot,
        userName: 'switchboard-chromium',
        sandbox: true,
        logger,
      }),
      logger,
    });
    // The proxy's refusals by host; the second layer's (which answers before the proxy) marked.
    browser.onBlocked = (request) =>
      blocked.push(request.reason === 'second layer' ? `second layer: ${request.host}` : request.host);
  });
  after(async () => {
    await browser?.dispose();
    site?.server.close();
    elsewhere?.server.close();
    await rm(profileRoot, { recursive: true, force: true });
  });

  it('drives the tab Chromium opened, never one of its own WebUI pages the policy turned to errors', async () => {
    // Chromium keeps chrome://omnibox-popup.top-chrome/… pages in the default context; blocked by
    // URLBlocklist they become error pages, and a hidden one's screenshots never come.
    assert.equal(browser.page.url(), 'about:blank');
    await browser.page.goto(`http://${site.host}/`);
    const shot = await Promise.race([
      screenshot(browser.cdp),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000)),
    ]);
    assert.ok(shot && shot.length > 0, 'a screenshot of the session page within 10 s');
  });

  it('refuses file:, chrome:, devtools: and view-source: pages, even to a raw CDP client', async () => {
    const cdp = await rawCdp(browser.cdpUrl);
    try {
      const created = await cdp.send('Target.createTarget', { url: 'file:///etc/hostname' });
      const attached = await cdp.send('Target.attachToTarget', {
        targetId: created.result!.targetId,
        flatten: true,
      });
      const sessionId = attached.result!.sessionId as string;
      const text = async () =>
        (
          await cdp.send(
            'Runtime.evaluate',
            { expression: 'document.body?.innerText ?? ""', returnByValue: true },
            sessionId,
          )
        ).result?.result?.value as string;
      await cdp.until('the blocked-page notice', async () => (await text()).includes('blocked'));
      for (const url of [
        'file:///etc/',
        'chrome://version',
        'devtools://devtools/bundled/inspector.html',
        'view-source:file:///etc/hostname',
      ]) {
        // Each from a fresh tab: Chromium 156 may leave a navigation away from its own error page
        // unanswered.
        const opened = await cdp.page(url);
        assert.equal(opened.navigated.result?.errorText, 'net::ERR_BLOCKED_BY_ADMINISTRATOR', url);
      }
    } finally {
      cdp.close();
    }
  });

  it('keeps no download, in the worker-driven context or in one a client creates', async () => {
    const cdp = await rawCdp(browser.cdpUrl);
    try {
      const context = (await cdp.send('Target.createBrowserContext', {})).result!.browserContextId as string;
      // A client that asks for events (not a path) learns of the download and of its end.
      await cdp.send('Browser.setDownloadBehavior', {
        behavior: 'default',
        browserContextId: context,
        eventsEnabled: true,
      });
      for (const contextId of [undefined, context]) {
        const opened = await cdp.page(`http://${site.host}/download`, contextId);
        assert.equal(opened.navigated.result?.isDownload, true);
      }
      await cdp.until('the download to be cancelled', () =>
        cdp.events.some((e) => e.method === 'Browser.downloadProgress' && e.params?.state === 'canceled'),
      );
      assert.ok(
        !cdp.events.some((e) => e.method === 'Browser.downloadProgress' && e.params?.state === 'completed'),
      );
      const files = await readdir(profileRoot, { recursive: true });
      assert.deepEqual(
        files.filter((f) => f.endsWith('x.bin')),
        [],
      );
    } finally {
      cdp.close();
    }
  });

  it('reaches nothing from a context with its own proxy (direct:// or another server)', async () => {
    const cdp = await rawCdp(browser.cdpUrl);
    try {
      for (const proxyServer of ['direct://', `http://${elsewhere.host}`]) {
        const context = (await cdp.send('Target.createBrowserContext', { proxyServer })).result!
          .browserContextId;
        const opened = await cdp.page(`http://${elsewhere.host}/around-the-proxy`, context as string);
        // Refused by the second layer (the guard's 403) or failing to resolve (host-resolver rules).
        await cdp.until('the page to be refused', async () => {
          const href = String(await opened.evaluate('location.href'));
          const text = String(await opened.evaluate('document.body?.innerText ?? ""'));
          return href.startsWith('chrome-error:') || text.includes('blocked by the address guard');
        });
      }
      assert.deepEqual(elsewhere.hits, []);
    } finally {
      cdp.close();
    }
  });

  it('sends no WebRTC UDP around the proxy', async () => {
    const udp = createSocket('udp4');
    let packets = 0;
    udp.on('message', () => packets++);
    udp.bind(0, '127.0.0.1');
    await once(udp, 'listening');
    const cdp = await rawCdp(browser.cdpUrl);
    try {
      const opened = await cdp.page(`http://${site.host}/rtc`);
      await cdp.until('the page', async () => (await opened.evaluate('document.title')) === 'ok');
      const candidates = await opened.evaluate(`(async () => {
        const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udp.address().port}' }] });
        pc.createDataChannel('x');
        const found = [];
        pc.onicecandidate = (e) => e.candidate && found.push(e.candidate.candidate);
        await pc.setLocalDescription(await pc.createOffer());
        await new Promise((r) => { pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r(); setTimeout(r, 5000); });
        return found; })()`);
      assert.deepEqual(candidates, []);
      assert.equal(packets, 0);
    } finally {
      cdp.close();
      udp.close();
    }
  });

  it('puts every page behind the second layer, even one a client resumes before the worker attaches', async () => {
    const cdp = await rawCdp(browser.cdpUrl);
    try {
      // What Playwright and Puppeteer clients do: auto-attach, pause new targets, resume them.
      await cdp.send('Target.setAutoAttach', {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: true,
      });
      const context = (await cdp.send('Target.createBrowserContext', {})).result!.browserContextId as string;
      for (const [contextId, address] of [
        [undefined, '10.9.8.7'],
        [context, '10.9.8.6'],
      ] as const) {
        const created = await cdp.send('Target.createTarget', {
          url: 'about:blank',
          browserContextId: contextId,
        });
        let sessionId = '';
        await cdp.until('the attach', () => {
          const event = cdp.events.find(
            (e) =>
              e.method === 'Target.attachedToTarget' &&
              e.params?.targetInfo.targetId === created.result!.targetId,
          );
          sessionId = event?.params?.sessionId ?? '';
          return sessionId !== '';
        });
        await cdp.send('Network.enable', {}, sessionId);
        await cdp.send('Runtime.runIfWaitingForDebugger', {}, sessionId);
        await cdp.send(
          'Page.navigate',
          { url: `http://${site.host}/embed?target=http://${address}/x.png` },
          sessionId,
        );
        let requestId = '';
        await cdp.until(`the answer to the request to ${address}`, () => {
          requestId ||=
            cdp.events.find(
              (e) =>
                e.method === 'Network.requestWillBeSent' &&
                e.params?.request.url.startsWith(`http://${address}/`),
            )?.params?.requestId ?? '';
          return cdp.events.some(
            (e) => e.method === 'Network.responseReceived' && e.params?.requestId === requestId,
          );
        });
        // The second layer answers as the proxy does: 403 with the guard's verdict header.
        const answer = cdp.events.find(
          (e) => e.method === 'Network.responseReceived' && e.params?.requestId === requestId,
        );
        assert.equal(answer!.params!.response.status, 403, address);
        assert.equal(answer!.params!.response.headers['x-switchboard-guard'], 'blocked', address);
        assert.ok(blocked.includes(`second layer: ${address}`), `the second layer refused ${address}`);
        assert.ok(!blocked.includes(address), `the request to ${address} never got as far as the proxy`);
      }
    } finally {
      cdp.close();
    }
  });
});
