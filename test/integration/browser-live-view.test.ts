import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { launchChromium, watchedPage, type WatchedPage } from '../support/chromium-page.js';

interface LiveLink {
  live_id: string;
  url: string;
  mode: 'view' | 'interact';
  expires_at: string;
}

/**
 * The live view through the gateway, against real browser workers: a second Chromium (as a person
 * would) opens the link's page and the test reads what it shows — frames, the state line — while
 * the API drives and inspects the session.
 */
describe('browser live view', { timeout: 240_000 }, () => {
  let stack: BrowserStack;
  let owner: CreatedKey;
  let other: CreatedKey;
  let viewerBrowser: Browser;
  const open: WatchedPage[] = [];
  /** Sessions a test made: closed after it, so the next finds a browser free. */
  const made: string[] = [];

  before(async () => {
    stack = await startBrowserStack();
    owner = await createKey(stack.gateway, { tier: 'professional' });
    other = await createKey(stack.gateway, { tier: 'professional' });
    viewerBrowser = await launchChromium();
  });
  after(async () => {
    await Promise.all(open.map((w) => w.context.close().catch(() => undefined)));
    await viewerBrowser?.close();
    await stack?.stop();
  });

  afterEach(async () => {
    await Promise.all(open.splice(0).map((w) => w.context.close().catch(() => undefined)));
    await Promise.all(made.splice(0).map((id) => call('POST', `/session/${id}/close`)));
  });

  const call = (method: string, path: string, body?: unknown, key = owner.key) =>
    fetch(`${stack.gateway.url}/api/browser${path}`, {
      method,
      headers: { ...bearer(key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  async function createSession(viewport = { viewport_width: 800, viewport_height: 600 }) {
    const res = await call('POST', '/session/create', viewport);
    assert.equal(res.status, 201, await res.clone().text());
    const session = (await res.json()) as { session_id: string; devtools_url: string };
    made.push(session.session_id);
    return session;
  }

  async function navigate(sessionId: string, path: string): Promise<void> {
    const res = await call('POST', `/session/${sessionId}/navigate`, { url: `${stack.site.origin}${path}` });
    assert.equal(res.status, 200, await res.clone().text());
  }

  async function link(sessionId: string, body: object = {}): Promise<LiveLink> {
    const res = await call('POST', `/session/${sessionId}/live`, body);
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as LiveLink;
  }

  async function currentUrl(sessionId: string): Promise<string> {
    const res = await call('GET', `/session/${sessionId}/details`);
    return ((await res.json()) as { current_url: string }).current_url;
  }

  async function openViewer(url: string): Promise<WatchedPage> {
    const watched = await watchedPage(viewerBrowser, stack.gateway.url);
    open.push(watched);
    const res = await watched.page.goto(url);
    assert.equal(res?.status(), 200);
    return watched;
  }

  const framesOf = async (page: Page) =>
    Number((await page.locator('body').getAttribute('data-frames')) ?? 0);
  const stateOf = (page: Page) => page.locator('body').getAttribute('data-state');

  async function waitFor<T>(what: string, within: number, probe: () => Promise<T | undefined | false>) {
    const deadline = Date.now() + within;
    for (;;) {
      const value = await probe();
      if (value) return value;
      if (Date.now() > deadline) assert.fail(`${what} within ${within} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** A small greyscale thumbnail of what the viewer shows, to tell two pictures apart. */
  const thumbnail = (page: Page) =>
    page.evaluate<{ grey: number[]; width: number; height: number }>(`(() => {
      const img = document.getElementById('screen');
      const canvas = document.createElement('canvas');
      canvas.width = 32;
      canvas.height = 24;
      const g = canvas.getContext('2d');
      g.drawImage(img, 0, 0, 32, 24);
      const data = g.getImageData(0, 0, 32, 24).data;
      const grey = [];
      for (let i = 0; i < data.length; i += 4) grey.push((data[i] + data[i + 1] + data[i + 2]) / 3);
      return { grey, width: img.naturalWidth, height: img.naturalHeight };
    })()`);
  const difference = (a: number[], b: number[]) =>
    a.reduce((sum, v, i) => sum + Math.abs(v - b[i]!), 0) / a.length;

  /** Where the session's `#go` button is, as a fraction of its viewport (read over DevTools). */
  async function buttonSpot(session: { devtools_url: string }) {
    const cdp = await chromium.connectOverCDP(session.devtools_url, { headers: bearer(owner.key) });
    try {
      const page = cdp
        .contexts()
        .flatMap((c) => c.pages())
        .find((p) => p.url().endsWith('/form'))!;
      const box = (await page.locator('#go').boundingBox())!;
      const size =
        page.viewportSize() ??
        (await page.evaluate<{ width: number; height: number }>(
          '({ width: innerWidth, height: innerHeight })',
        ));
      const sizeWH = { w: size.width, h: size.height };
      return { x: (box.x + box.width / 2) / sizeWH.w, y: (box.y + box.height / 2) / sizeWH.h };
    } finally {
      await cdp.close();
    }
  }

  async function clickInViewer(page: Page, spot: { x: number; y: number }) {
    const box = (await page.locator('#screen').boundingBox())!;
    await page.mouse.click(box.x + spot.x * box.width, box.y + spot.y * box.height);
  }

  it('shows a frame within 2 s, a new picture after navigate, under its CSP without console errors', async () => {
    const session = await createSession();
    await navigate(session.session_id, '/form');
    const created = await link(session.session_id);
    assert.equal(created.mode, 'view');
    assert.match(created.url, new RegExp(`^${stack.gateway.url}/live/`));
    const expiresIn = Date.parse(created.expires_at) - Date.now();
    assert.ok(expiresIn > 3_500_000 && expiresIn <= 3_600_000, `default ttl ${expiresIn}`);

    const page = await fetch(created.url);
    assert.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' blob: data:",
      "connect-src 'self'",
    ])
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(page.headers.get('cache-control'), 'no-store');

    // Timed by the page itself, from opening its socket to drawing the first picture: a fresh
    // browser context, the test Chromium loading the page and this test's polling on a busy
    // machine are the test's cost, not the view's.
    const viewer = await openViewer(created.url);
    await waitFor('a first frame', 10_000, async () => (await framesOf(viewer.page)) > 0);
    const firstFrameMs = Number(await viewer.page.locator('body').getAttribute('data-first-frame-ms'));
    assert.ok(firstFrameMs > 0 && firstFrameMs <= 2_000, `first frame after ${firstFrameMs} ms`);
    const before = await thumbnail(viewer.page);
    assert.deepEqual([before.width, before.height], [800, 600]);

    // A still page is not frozen: its last frame comes again.
    const count = await framesOf(viewer.page);
    await waitFor('the last frame resent', 2_500, async () => (await framesOf(viewer.page)) > count);

    await navigate(session.session_id, '/hello-there');
    await waitFor(
      'a changed picture',
      3_000,
      async () => difference((await thumbnail(viewer.page)).grey, before.grey) > 1,
    );
    assert.deepEqual(viewer.problems(), []);
  });

  it('interact mode: a click in the viewer clicks the page; view mode: the same click does nothing', async () => {
    const session = await createSession();
    await navigate(session.session_id, '/form');
    const spot = await buttonSpot(session);

    const watching = await openViewer((await link(session.session_id, { mode: 'view' })).url);
    await waitFor('a frame (view)', 3_000, async () => (await framesOf(watching.page)) > 0);
    await clickInViewer(watching.page, spot);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.match(await currentUrl(session.session_id), /\/form$/, 'a view link clicks nothing');

    const acting = await openViewer((await link(session.session_id, { mode: 'interact' })).url);
    await waitFor('a frame (interact)', 3_000, async () => (await framesOf(acting.page)) > 0);
    await clickInViewer(acting.page, spot);
    await waitFor('the form submitted by the viewer', 5_000, async () =>
      /\/result\?name=$/.test(await currentUrl(session.session_id)),
    );
    assert.deepEqual(watching.problems(), []);
    assert.deepEqual(acting.problems(), []);
  });

  it('follows the tab the session works in: a tab opened in it, back when it closes or an API call comes', async () => {
    const session = await createSession();
    await navigate(session.session_id, '/form');
    const viewer = await openViewer((await link(session.session_id)).url);
    await waitFor('a frame', 3_000, async () => (await framesOf(viewer.page)) > 0);
    const own = await thumbnail(viewer.page);
    // Following has no bound of its own (it is looked at every 500 ms): generous for a busy machine.
    const showing = (what: string, ownTab: boolean) =>
      waitFor(what, 15_000, async () => {
        const apart = difference((await thumbnail(viewer.page)).grey, own.grey);
        return ownTab ? apart < 0.5 : apart > 1;
      });

    // A DevTools client opens a tab and works in it: the picture moves there.
    const devtools = await chromium.connectOverCDP(session.devtools_url, { headers: bearer(owner.key) });
    try {
      const context = devtools.contexts()[0]!;
      const tab = await context.newPage();
      await tab.goto(`${stack.site.origin}/hello-there`);
      await showing('the new tab', false);
      await tab.close();
      await showing("the session's own tab once the new one closed", true);

      const another = await context.newPage();
      await another.goto(`${stack.site.origin}/hello-again`);
      await showing('the second new tab', false);
      // An API call works in the session's own tab: the picture goes back, the other tab still open.
      const read = await call('POST', `/session/${session.session_id}/content`, { formats: ['text'] });
      assert.equal(read.status, 200, await read.clone().text());
      await showing("the session's own tab after an API call", true);
      assert.equal(another.isClosed(), false);
    } finally {
      await devtools.close();
    }
    assert.deepEqual(viewer.problems(), []);
  });

  it('a revoked link disconnects its viewer within 2 s and the page says so; it opens nothing after', async () => {
    const session = await createSession();
    await navigate(session.session_id, '/form');
    const created = await link(session.session_id);
    const viewer = await openViewer(created.url);
    await waitFor('a frame', 3_000, async () => (await framesOf(viewer.page)) > 0);

    const revoked = await call('DELETE', `/session/${session.session_id}/live/${created.live_id}`);
    assert.equal(revoked.status, 204);
    const at = Date.now();
    await waitFor('the viewer told', 2_500, async () => (await stateOf(viewer.page)) === 'revoked');
    assert.ok(Date.now() - at <= 2_500);
    assert.match((await viewer.page.locator('#status').textContent()) ?? '', /revoked/);
    assert.equal((await fetch(created.url)).status, 404);
    const again = await call('DELETE', `/session/${session.session_id}/live/${created.live_id}`);
    assert.equal(again.status, 404);
  });

  it("a link of session A only ever shows session A's browser", async () => {
    const a = await createSession({ viewport_width: 640, viewport_height: 480 });
    const b = await createSession({ viewport_width: 1024, viewport_height: 400 });
    await navigate(a.session_id, '/form');
    await navigate(b.session_id, '/hello-b');
    const viewer = await openViewer((await link(a.session_id)).url);
    await waitFor('a frame', 3_000, async () => (await framesOf(viewer.page)) > 0);
    for (let i = 0; i < 5; i++) {
      await navigate(b.session_id, `/hello-b-${i}`);
      const shown = await thumbnail(viewer.page);
      assert.deepEqual([shown.width, shown.height], [640, 480]);
    }
    assert.match(await currentUrl(a.session_id), /\/form$/);
  });

  it("another key cannot make links for the session; a closed session's link is refused", async () => {
    const session = await createSession();
    const stranger = await call('POST', `/session/${session.session_id}/live`, {}, other.key);
    assert.equal(stranger.status, 404);
    assert.equal(((await stranger.json()) as { error: { code: string } }).error.code, 'session_not_found');
    const bad = await call('POST', `/session/${session.session_id}/live`, { mode: 'drive', ttl_s: 10 });
    assert.equal(bad.status, 400);

    const created = await link(session.session_id, { ttl_s: 60 });
    const viewer = await openViewer(created.url);
    await waitFor('a frame', 3_000, async () => (await framesOf(viewer.page)) > 0);
    const closed = await call('POST', `/session/${session.session_id}/close`);
    assert.equal(closed.status, 200);
    await waitFor(
      'the viewer told the session ended',
      2_500,
      async () => (await stateOf(viewer.page)) === 'ended',
    );
    assert.equal((await fetch(created.url)).status, 410);
    const refused = await call('POST', `/session/${session.session_id}/live`);
    assert.equal(refused.status, 410);
  });

  it("the admin's live view of any session", async () => {
    const session = await createSession();
    const res = await admin(stack.gateway, 'POST', `/browser/sessions/${session.session_id}/live`, {});
    assert.equal(res.status, 201, await res.clone().text());
    const created = (await res.json()) as LiveLink;
    const viewer = await openViewer(created.url);
    await waitFor('a frame', 3_000, async () => (await framesOf(viewer.page)) > 0);
    assert.equal(created.mode, 'view');
  });
});
