// POST /api/browser/scrape: one session made for the call and closed before the answer, through
// the same address guard and session limit as any session. Real Chromium in a real browser
// worker, a local website, real S3, usage in a real database.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { connect as natsConnect, type NatsConnection } from 'nats';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { errorOf, until } from '../support/stack.js';
import { listenOnLoopback, type TestSite } from '../support/test-site.js';
import { untilUsage, usageAroundToday } from '../support/usage.js';

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Catalogue</title>
<meta name="description" content="Things for sale."></head><body>
<h1>Catalogue</h1><p>Three <a href="/things/1">things</a> for sale.</p>
<div id="late"></div>
<script>setTimeout(() => { document.getElementById('late').innerHTML = '<p id="arrived">Arrived late</p>'; }, 300);</script>
</body></html>`;

describe('one-shot scrape', { timeout: 240_000 }, () => {
  let site: TestSite;
  let stack: BrowserStack;
  let key: CreatedKey;
  let nats: NatsConnection;
  const events: { subject: string; body: Record<string, unknown> }[] = [];

  before(async () => {
    site = await listenOnLoopback(
      createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(PAGE);
      }),
      [],
    );
    stack = await startBrowserStack({ workerEnv: { BROWSER_ALLOWED_HOSTS: site.host } });
    // basic: 2 sessions at once.
    key = await createKey(stack.gateway, { tier: 'basic', rate_limit_per_minute: null });
    nats = await natsConnect(stack.nats.connectOptions('operator'));
    const sub = nats.subscribe('switchboard.events.browser.>');
    void (async () => {
      for await (const message of sub) {
        events.push({
          subject: message.subject,
          body: JSON.parse(message.string()) as Record<string, unknown>,
        });
      }
    })();
    await nats.flush();
  });
  after(async () => {
    await nats?.drain();
    await stack?.stop();
    await site?.stop();
  });

  const scrape = (body: unknown, as: CreatedKey = key) =>
    fetch(`${stack.gateway.url}/api/browser/scrape`, {
      method: 'POST',
      headers: { ...bearer(as.key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const activeSessions = () => stack.workers[0]!.metric('browser_active_sessions');

  it('answers every format, a screenshot and a PDF, and closes its session', async () => {
    const res = await scrape({
      url: `${site.origin}/catalogue`,
      formats: ['markdown', 'text', 'links', 'metadata', 'screenshot', 'pdf'],
      wait_for: '#arrived',
      viewport_width: 640,
      viewport_height: 480,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const body = JSON.parse(text) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body), [
      'url',
      'title',
      'http_status',
      'text',
      'markdown',
      'links',
      'metadata',
      'screenshot_url',
      'pdf_url',
      'truncated',
      'warnings',
    ]);
    assert.equal(body.url, `${site.origin}/catalogue`);
    assert.equal(body.title, 'Catalogue');
    assert.equal(body.http_status, 200);
    assert.match(body.markdown as string, /^# Catalogue$/m);
    assert.ok((body.markdown as string).includes(`[things](${site.origin}/things/1)`));
    // wait_for waited for the late paragraph.
    assert.match(body.text as string, /Arrived late/);
    assert.deepEqual(body.links, [{ url: `${site.origin}/things/1`, text: 'things' }]);
    assert.equal((body.metadata as Record<string, unknown>).description, 'Things for sale.');
    assert.equal(body.truncated, false);
    assert.deepEqual(body.warnings, []);

    const shotUrl = body.screenshot_url as string;
    const pdfUrl = body.pdf_url as string;
    const match = /^\/api\/browser\/screenshots\/([0-9a-f-]{36})\/capture-\d{13}\.png$/.exec(shotUrl);
    assert.ok(match, shotUrl);
    const sessionId = match[1]!;
    assert.match(pdfUrl, new RegExp(`^/api/browser/pdfs/${sessionId}/page-\\d{13}\\.pdf$`));
    const shot = await fetch(`${stack.gateway.url}${shotUrl}`, { headers: bearer(key.key) });
    assert.equal(shot.status, 200);
    assert.equal(shot.headers.get('content-type'), 'image/png');
    const pdf = await fetch(`${stack.gateway.url}${pdfUrl}`, { headers: bearer(key.key) });
    assert.equal(pdf.status, 200);
    assert.equal(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString('latin1'),
      '%PDF-',
    );

    // The session made for the call is over: closed, its browser gone, nothing more done in it.
    const details = await fetch(`${stack.gateway.url}/api/browser/session/${sessionId}/details`, {
      headers: bearer(key.key),
    });
    assert.equal(details.status, 200);
    assert.equal(((await details.json()) as { status: string }).status, 'closed');
    const again = await fetch(`${stack.gateway.url}/api/browser/session/${sessionId}/navigate`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.origin}/` }),
    });
    assert.equal(again.status, 410);
    await until(async () => (await activeSessions()) === 0, 'no session left on the worker');

    // Its events, for the key's webhooks: the PDF (with the session's details) and the scrape.
    const of = (subject: string) =>
      events.find((e) => e.subject === `switchboard.events.${subject}` && e.body.session_id === sessionId);
    await until(() => Boolean(of('browser.pdf.created') && of('browser.scrape.completed')), 'both events');
    const printed = of('browser.pdf.created')!.body;
    assert.equal(printed.key_id, key.id);
    const printedData = printed.data as Record<string, unknown>;
    assert.equal(printedData.pdf, pdfUrl.slice('/api/browser/pdfs/'.length));
    assert.deepEqual(printedData.pdfs, [pdfUrl.split('/').at(-1)]);
    const scraped = of('browser.scrape.completed')!.body;
    assert.equal(scraped.key_id, key.id);
    const scrapedData = scraped.data as Record<string, unknown>;
    assert.equal(scrapedData.url, `${site.origin}/catalogue`);
    assert.equal(scrapedData.pdf_url, pdfUrl);
    assert.equal(scrapedData.screenshot_url, shotUrl);
  });

  it('refuses loopback and private URLs with url_not_allowed, and closes the session anyway', async () => {
    for (const url of ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/']) {
      const res = await scrape({ url, formats: ['markdown'] });
      assert.equal(res.status, 400, url);
      assert.equal((await errorOf(res)).code, 'url_not_allowed', url);
    }
    // wait_for gives up after its 30 s.
    const missing = await scrape({ url: `${site.origin}/`, wait_for: '#never' });
    assert.equal(missing.status, 400);
    const error = await errorOf(missing);
    assert.equal(error.code, 'element_not_found');
    await until(async () => (await activeSessions()) === 0, 'no session left on the worker');
  });

  it('never holds a session after it: a basic key (2 sessions) scrapes 3 times in a row', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await scrape({ url: `${site.origin}/n${i}`, formats: ['text'] });
      assert.equal(res.status, 200, await res.clone().text());
    }
    // Two sessions of its own at once: the third, or a scrape, is over its tier's limit.
    const sessions: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${stack.gateway.url}/api/browser/session/create`, {
        method: 'POST',
        headers: bearer(key.key),
      });
      assert.equal(res.status, 201);
      sessions.push(((await res.json()) as { session_id: string }).session_id);
    }
    const over = await scrape({ url: `${site.origin}/` });
    assert.equal(over.status, 429);
    assert.equal((await errorOf(over)).code, 'session_limit');
    for (const id of sessions) {
      await fetch(`${stack.gateway.url}/api/browser/session/${id}/close`, {
        method: 'POST',
        headers: bearer(key.key),
      });
    }
    assert.equal((await scrape({ url: `${site.origin}/` })).status, 200);
  });

  it('counts scrapes in usage', async () => {
    const counter = await createKey(stack.gateway, { tier: 'professional', rate_limit_per_minute: null });
    for (let i = 0; i < 2; i++) {
      assert.equal((await scrape({ url: `${site.origin}/`, formats: ['pdf'] }, counter)).status, 200);
    }
    await untilUsage(
      () => usageAroundToday(stack.gateway, counter.key),
      (totals) => totals['browser/null/scrapes'] === 2 && totals['browser/null/pdfs'] === 2,
      'two scrapes and their PDFs',
    );
  });
});
