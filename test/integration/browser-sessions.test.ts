import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import WebSocket from 'ws';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { pngSize } from '../support/png.js';
import { errorOf } from '../support/stack.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('browser sessions through the gateway', { timeout: 180_000 }, () => {
  let stack: BrowserStack;
  let owner: CreatedKey;
  let stranger: CreatedKey;

  before(async () => {
    stack = await startBrowserStack();
    owner = await createKey(stack.gateway, { tier: 'professional' });
    stranger = await createKey(stack.gateway, { tier: 'professional' });
  });
  after(async () => stack?.stop());

  const call = (key: CreatedKey, method: string, path: string, body?: unknown) =>
    fetch(`${stack.gateway.url}/api/browser${path}`, {
      method,
      headers: { ...bearer(key.key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const json = async (res: Response, status: number) => {
    const text = await res.text();
    assert.equal(res.status, status, text);
    return JSON.parse(text) as Record<string, unknown>;
  };

  it('runs the whole flow: create, navigate, input, submit, capture twice, details, close', async () => {
    const created = await json(
      await call(owner, 'POST', '/session/create', { viewport_width: 800, viewport_height: 600 }),
      201,
    );
    const id = created.session_id as string;
    assert.match(id, UUID_V4);
    assert.equal(created.status, 'active');
    assert.match(created.created_at as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal(
      created.devtools_url,
      `ws://127.0.0.1:${stack.gateway.port}/api/browser/session/${id}/devtools`,
    );

    const formUrl = `${stack.site.origin}/form`;
    const nav = await json(await call(owner, 'POST', `/session/${id}/navigate`, { url: formUrl }), 200);
    assert.deepEqual(nav, { session_id: id, url: formUrl, title: 'Sign up', http_status: 200 });

    const typed = await json(
      await call(owner, 'POST', `/session/${id}/input`, { selector: '#name', text: 'Ada <Lovelace>' }),
      200,
    );
    assert.deepEqual(typed, { session_id: id, selector: '#name' });

    const submitted = await json(
      await call(owner, 'POST', `/session/${id}/submit`, { selector: '#go' }),
      200,
    );
    const resultUrl = `${stack.site.origin}/result?name=Ada+%3CLovelace%3E`;
    assert.deepEqual(submitted, { session_id: id, url: resultUrl });

    // What was typed reached the next page: seen through DevTools on the same browser.
    const cdp = await chromium.connectOverCDP(created.devtools_url, { headers: bearer(owner.key) });
    try {
      const pages = cdp.contexts().flatMap((c) => c.pages());
      const page = pages.find((p) => p.url() === resultUrl);
      assert.ok(
        page,
        `the REST-driven page is visible over DevTools (saw ${pages.map((p) => p.url()).join(', ')})`,
      );
      assert.equal(await page.textContent('#out'), 'Hello, Ada <Lovelace>');
    } finally {
      await cdp.close();
    }

    const first = await json(await call(owner, 'POST', `/session/${id}/capture`), 200);
    const second = await json(await call(owner, 'POST', `/session/${id}/capture`), 200);
    assert.notEqual(first.screenshot, second.screenshot);
    for (const shot of [first, second]) {
      assert.match(shot.screenshot as string, new RegExp(`^${id}/capture-\\d{13}\\.png$`));
      assert.equal(shot.url, `/api/browser/screenshots/${shot.screenshot as string}`);
      const image = await fetch(`${stack.gateway.url}${shot.url}`, { headers: bearer(owner.key) });
      assert.equal(image.status, 200);
      assert.equal(image.headers.get('content-type'), 'image/png');
      assert.deepEqual(pngSize(Buffer.from(await image.arrayBuffer())), { width: 800, height: 600 });
      // Someone else's key gets exactly what a missing file gets.
      const foreign = await fetch(`${stack.gateway.url}${shot.url}`, { headers: bearer(stranger.key) });
      assert.equal(foreign.status, 404);
    }

    const details = await json(await call(owner, 'GET', `/session/${id}/details`), 200);
    assert.deepEqual(details, {
      session_id: id,
      status: 'active',
      created_at: created.created_at,
      current_url: resultUrl,
      history: [formUrl, resultUrl],
      screenshots: [(first.screenshot as string).split('/')[1], (second.screenshot as string).split('/')[1]],
      pdfs: [],
      end_reason: null,
    });

    assert.deepEqual(await json(await call(owner, 'POST', `/session/${id}/close`), 200), {
      session_id: id,
      status: 'closed',
    });
    assert.deepEqual(await json(await call(owner, 'POST', `/session/${id}/close`), 200), {
      session_id: id,
      status: 'closed',
    });
    for (const [path, body] of [
      ['navigate', { url: formUrl }],
      ['input', { selector: '#name', text: 'x' }],
      ['submit', { selector: '#go' }],
      ['capture', undefined],
    ] as const) {
      const res = await call(owner, 'POST', `/session/${id}/${path}`, body);
      assert.equal(res.status, 410, path);
      assert.equal((await errorOf(res)).code, 'session_closed');
    }
    const closed = await json(await call(owner, 'GET', `/session/${id}/details`), 200);
    assert.equal(closed.status, 'closed');
    assert.equal(closed.end_reason, 'closed');
    assert.deepEqual(closed.history, [formUrl, resultUrl]);
    // Screenshots outlive the session.
    const kept = await fetch(`${stack.gateway.url}${first.url as string}`, { headers: bearer(owner.key) });
    assert.equal(kept.status, 200);
  });

  it('hides a session from every other key: 404 on every call', async () => {
    const { session_id: id } = await json(await call(owner, 'POST', '/session/create'), 201);
    const shot = await json(await call(owner, 'POST', `/session/${id as string}/capture`), 200);
    const calls: [string, string, unknown][] = [
      ['POST', 'navigate', { url: `${stack.site.origin}/form` }],
      ['POST', 'input', { selector: '#name', text: 'x' }],
      ['POST', 'submit', { selector: '#go' }],
      ['POST', 'capture', undefined],
      ['GET', 'details', undefined],
      ['POST', 'close', undefined],
    ];
    for (const [method, path, body] of calls) {
      const res = await call(stranger, method, `/session/${id as string}/${path}`, body);
      assert.equal(res.status, 404, path);
      assert.equal((await errorOf(res)).code, 'session_not_found');
    }
    const image = await fetch(`${stack.gateway.url}${shot.url as string}`, { headers: bearer(stranger.key) });
    assert.equal(image.status, 404);
    // Still the owner's, untouched.
    assert.equal(
      (await json(await call(owner, 'GET', `/session/${id as string}/details`), 200)).status,
      'active',
    );
    await call(owner, 'POST', `/session/${id as string}/close`);
  });

  it('answers bad input with the documented errors', async () => {
    const badCreates: [unknown, string][] = [
      [{ viewport_width: 99 }, 'viewport_width'],
      [{ viewport_height: 3841 }, 'viewport_height'],
      [{ viewport_width: '800' }, 'viewport_width'],
      [{ viewport_width: 800.5 }, 'viewport_width'],
    ];
    for (const [body, param] of badCreates) {
      const res = await call(owner, 'POST', '/session/create', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      const error = await errorOf(res);
      assert.equal(error.code, 'invalid_request');
      assert.equal(error.param, param);
    }
    const { session_id: id } = await json(await call(owner, 'POST', '/session/create'), 201);
    const s = `/session/${id as string}`;
    for (const [path, body, param] of [
      ['navigate', {}, 'url'],
      ['navigate', { url: 42 }, 'url'],
      ['input', { text: 'x' }, 'selector'],
      ['input', { selector: '#name' }, 'text'],
      ['submit', {}, 'selector'],
    ] as const) {
      const res = await call(owner, 'POST', `${s}/${path}`, body);
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal((await errorOf(res)).param, param);
    }
    await json(await call(owner, 'POST', `${s}/navigate`, { url: `${stack.site.origin}/form` }), 200);

    const started = Date.now();
    const missing = await call(owner, 'POST', `${s}/input`, { selector: '#nope', text: 'x' });
    assert.equal(missing.status, 400);
    assert.equal((await errorOf(missing)).code, 'element_not_found');
    assert.ok(Date.now() - started < 8_000, 'element_not_found comes after about 5 s');
    const missingSubmit = await call(owner, 'POST', `${s}/submit`, { selector: '#nope' });
    assert.equal((await errorOf(missingSubmit)).code, 'element_not_found');

    const refused = await call(owner, 'POST', `${s}/navigate`, { url: `${stack.refusedOrigin}/` });
    assert.equal(refused.status, 502);
    assert.equal((await errorOf(refused)).code, 'navigation_failed');
    const timedOut = await call(owner, 'POST', `${s}/navigate`, { url: `${stack.site.origin}/never` });
    assert.equal(timedOut.status, 502);
    assert.equal((await errorOf(timedOut)).code, 'navigation_failed');
    // A navigation that failed is not history.
    const details = await json(await call(owner, 'GET', `${s}/details`), 200);
    assert.deepEqual(details.history, [`${stack.site.origin}/form`]);

    const unknown = await call(owner, 'GET', '/session/00000000-0000-4000-8000-000000000000/details');
    assert.equal((await errorOf(unknown)).code, 'session_not_found');
    const malformed = await call(owner, 'GET', '/session/not-a-uuid/details');
    assert.equal(malformed.status, 404);
    await call(owner, 'POST', `${s}/close`);
  });

  it('serves DevTools to standard clients with the key, and only to the owner', async () => {
    const created = await json(await call(owner, 'POST', '/session/create'), 201);
    const id = created.session_id as string;
    const devtoolsUrl = created.devtools_url as string;
    const helloUrl = `${stack.site.origin}/hello`;
    await json(await call(owner, 'POST', `/session/${id}/navigate`, { url: helloUrl }), 200);

    const browser = await puppeteer.connect({ browserWSEndpoint: devtoolsUrl, headers: bearer(owner.key) });
    try {
      const pages = await browser.pages();
      const page = pages.find((p) => p.url() === helloUrl);
      assert.ok(page, 'Puppeteer sees the page the REST calls navigated');
      assert.equal(await page.evaluate('document.title'), 'Hello');
      // And can drive it: a page it opens itself is behind the same guard.
      const own = await browser.newPage();
      await own.goto(`${stack.site.origin}/form`);
      assert.equal(await own.title(), 'Sign up');
      await own.close();
    } finally {
      await browser.disconnect();
    }

    const refusal = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(devtoolsUrl, { headers });
        socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.once('open', () => reject(new Error('the upgrade was accepted')));
        socket.once('error', () => undefined);
      });
    assert.equal(await refusal({}), 401);
    assert.equal(await refusal(bearer('sb_aaaaaaaaaaaa_notarealsecretnotarealsecretnotareal')), 401);
    assert.equal(await refusal(bearer(stranger.key)), 404);
    const plain = await call(owner, 'GET', `/session/${id}/devtools`);
    assert.equal(plain.status, 400);

    await json(await call(owner, 'POST', `/session/${id}/close`), 200);
    assert.equal(await refusal(bearer(owner.key)), 410);
  });

  it('limits concurrent sessions by tier', async () => {
    const basic = await createKey(stack.gateway, { tier: 'basic' });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++)
      ids.push((await json(await call(basic, 'POST', '/session/create'), 201)).session_id as string);
    const third = await call(basic, 'POST', '/session/create');
    assert.equal(third.status, 429);
    assert.equal((await errorOf(third)).code, 'session_limit');
    await json(await call(basic, 'POST', `/session/${ids[0]!}/close`), 200);
    const again = await json(await call(basic, 'POST', '/session/create'), 201);
    for (const id of [ids[1]!, again.session_id as string]) await call(basic, 'POST', `/session/${id}/close`);
  });
});
