// Reading a session's page (content) and printing it (pdf) through the gateway: real Chromium in a
// real browser worker, a local website, the PDFs in a real S3 store, usage in a real database.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { errorOf } from '../support/stack.js';
import { listenOnLoopback, type TestSite } from '../support/test-site.js';
import { untilUsage, usageAroundToday } from '../support/usage.js';

/** Small, so a page of a few hundred kilobytes passes it (the default is 5 MB). */
const CONTENT_MAX_BYTES = 100_000;

const ARTICLE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tide tables</title>
<meta name="description" content="How tides are measured.">
<meta property="og:title" content="Tides (OG)"><meta property="og:type" content="article">
<link rel="canonical" href="/articles/tides"></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<article id="story">
<h1>Tide tables of the north</h1>
<p>Tides rise and fall twice a day along the northern coast, and the people who fish there have
measured them for centuries with poles, marks on stones and later with gauges. This article explains
how the measurements are taken, how the numbers are read, and why the tables differ between harbours
even when the harbours are only a few miles apart. Read the <a href="docs/gauges.html">gauge guide</a>.</p>
<h2>Method</h2>
<p>Each reading is the height of the water above chart datum, taken every ten minutes and averaged
over the hour, which smooths the waves away and leaves the tide; the gauges send it to the office.</p>
<table><thead><tr><th>Harbour</th><th>High water</th></tr></thead>
<tbody><tr><td>Northport</td><td>06:12</td></tr><tr><td>Eastness</td><td>06:40</td></tr></tbody></table>
<form><input id="q" name="q"></form>
</article>
<footer id="foot">Footer words <a href="/contact">Contact</a></footer>
</body></html>`;

/** Several printed pages, not hundreds. */
const LONG = `<!doctype html><html><head><meta charset="utf-8"><title>Long</title></head><body>${'<p>A paragraph of a page that prints on several sheets.</p>'.repeat(200)}</body></html>`;

const HUGE = `<!doctype html><html><head><meta charset="utf-8"><title>Huge</title></head><body>${'<p>Many words on a long page é.</p>'.repeat(10_000)}</body></html>`;

describe('page content and PDFs of a session', { timeout: 240_000 }, () => {
  let site: TestSite;
  let stack: BrowserStack;
  let owner: CreatedKey;
  let stranger: CreatedKey;

  before(async () => {
    site = await listenOnLoopback(
      createServer((req, res) => {
        const body = req.url?.startsWith('/huge') ? HUGE : req.url?.startsWith('/long') ? LONG : ARTICLE;
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(body);
      }),
      [],
    );
    stack = await startBrowserStack({
      workerEnv: {
        BROWSER_ALLOWED_HOSTS: site.host,
        BROWSER_CONTENT_MAX_BYTES: String(CONTENT_MAX_BYTES),
      },
    });
    owner = await createKey(stack.gateway, { tier: 'professional', rate_limit_per_minute: null });
    stranger = await createKey(stack.gateway, { tier: 'professional', rate_limit_per_minute: null });
  });
  after(async () => {
    await stack?.stop();
    await site?.stop();
  });

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
  const sessionAt = async (path: string): Promise<string> => {
    const { session_id: id } = await json(await call(owner, 'POST', '/session/create'), 201);
    await json(
      await call(owner, 'POST', `/session/${id as string}/navigate`, { url: `${site.origin}${path}` }),
      200,
    );
    return id as string;
  };

  it('answers Markdown by default, and every format as asked', async () => {
    const id = await sessionAt('/article');
    const plain = await json(await call(owner, 'POST', `/session/${id}/content`), 200);
    assert.deepEqual(Object.keys(plain), ['session_id', 'url', 'title', 'markdown', 'truncated', 'warnings']);
    assert.equal(plain.session_id, id);
    assert.equal(plain.url, `${site.origin}/article`);
    assert.equal(plain.title, 'Tide tables');
    assert.equal(plain.truncated, false);
    assert.deepEqual(plain.warnings, []);
    const markdown = plain.markdown as string;
    assert.match(markdown, /^# Tide tables of the north$/m);
    assert.match(markdown, /^## Method$/m);
    assert.match(markdown, /^\| Harbour \| High water \|$/m, markdown);
    assert.match(markdown, /^\| --- \| --- \|$/m);
    assert.match(markdown, /^\| Northport \| 06:12 \|$/m);
    assert.ok(markdown.includes(`[gauge guide](${site.origin}/docs/gauges.html)`), markdown);

    const all = await json(
      await call(owner, 'POST', `/session/${id}/content`, {
        formats: ['html', 'text', 'markdown', 'links', 'metadata'],
      }),
      200,
    );
    assert.deepEqual(Object.keys(all), [
      'session_id',
      'url',
      'title',
      'html',
      'text',
      'markdown',
      'links',
      'metadata',
      'truncated',
      'warnings',
    ]);
    assert.deepEqual(all.links, [
      { url: `${site.origin}/`, text: 'Home' },
      { url: `${site.origin}/about`, text: 'About us' },
      { url: `${site.origin}/docs/gauges.html`, text: 'gauge guide' },
      { url: `${site.origin}/contact`, text: 'Contact' },
    ]);
    assert.deepEqual(all.metadata, {
      title: 'Tide tables',
      description: 'How tides are measured.',
      lang: 'en',
      canonical_url: `${site.origin}/articles/tides`,
      og: { title: 'Tides (OG)', type: 'article' },
    });
    assert.match(all.text as string, /Footer words/);
    assert.match(all.html as string, /<footer id="foot">/);
    await call(owner, 'POST', `/session/${id}/close`);
  });

  it('limits the content to a selector, or to the main article', async () => {
    const id = await sessionAt('/article');
    const table = await json(
      await call(owner, 'POST', `/session/${id}/content`, { formats: ['text', 'links'], selector: 'table' }),
      200,
    );
    assert.match(table.text as string, /Northport/);
    assert.doesNotMatch(table.text as string, /Tides rise|Footer/);
    assert.deepEqual(table.links, []);

    const main = await json(
      await call(owner, 'POST', `/session/${id}/content`, {
        formats: ['markdown', 'text'],
        main_content: true,
      }),
      200,
    );
    assert.deepEqual(main.warnings, []);
    assert.match(main.text as string, /Tides rise and fall/);
    for (const format of ['markdown', 'text'] as const) {
      assert.doesNotMatch(main[format] as string, /About us|Footer words|Contact/, format);
    }

    const missing = await call(owner, 'POST', `/session/${id}/content`, { selector: '#nothing-here' });
    assert.equal(missing.status, 400);
    assert.equal((await errorOf(missing)).code, 'element_not_found');
    await call(owner, 'POST', `/session/${id}/close`);
  });

  it('reads the page as it is now: text typed with input shows in html', async () => {
    const id = await sessionAt('/article');
    await json(
      await call(owner, 'POST', `/session/${id}/input`, { selector: '#q', text: 'spring tides' }),
      200,
    );
    const now = await json(await call(owner, 'POST', `/session/${id}/content`, { formats: ['html'] }), 200);
    assert.match(now.html as string, /<input id="q" name="q" value="spring tides">/);
    await call(owner, 'POST', `/session/${id}/close`);
  });

  it('cuts a page past BROWSER_CONTENT_MAX_BYTES with truncated: true', async () => {
    const id = await sessionAt('/huge');
    const huge = await json(
      await call(owner, 'POST', `/session/${id}/content`, { formats: ['text', 'markdown', 'html'] }),
      200,
    );
    assert.equal(huge.truncated, true);
    for (const format of ['text', 'markdown', 'html'] as const) {
      const bytes = Buffer.byteLength(huge[format] as string);
      assert.ok(bytes <= CONTENT_MAX_BYTES && bytes > CONTENT_MAX_BYTES / 2, `${format}: ${bytes} bytes`);
    }
    await call(owner, 'POST', `/session/${id}/close`);
  });

  it("refuses another key's session, bad formats, and an ended session", async () => {
    const id = await sessionAt('/article');
    const foreign = await call(stranger, 'POST', `/session/${id}/content`);
    assert.equal(foreign.status, 404);
    assert.equal((await errorOf(foreign)).code, 'session_not_found');
    const foreignPdf = await call(stranger, 'POST', `/session/${id}/pdf`);
    assert.equal(foreignPdf.status, 404);

    const bad = await call(owner, 'POST', `/session/${id}/content`, { formats: ['pdf'] });
    assert.equal(bad.status, 400);
    assert.equal((await errorOf(bad)).param, 'formats.0');

    await call(owner, 'POST', `/session/${id}/close`);
    for (const path of ['content', 'pdf']) {
      const ended = await call(owner, 'POST', `/session/${id}/${path}`);
      assert.equal(ended.status, 410, path);
      assert.equal((await errorOf(ended)).code, 'session_closed');
    }
  });

  it('prints a PDF: stored, served to its owner only, listed in details, counted in usage', async () => {
    const id = await sessionAt('/article');
    const printed = await json(await call(owner, 'POST', `/session/${id}/pdf`, { format: 'Letter' }), 200);
    assert.deepEqual(Object.keys(printed), ['pdf', 'url', 'pages']);
    assert.match(printed.pdf as string, new RegExp(`^${id}/page-\\d{13}\\.pdf$`));
    assert.equal(printed.url, `/api/browser/pdfs/${printed.pdf as string}`);
    assert.ok((printed.pages as number) >= 1, `${printed.pages as number} pages`);

    const file = await fetch(`${stack.gateway.url}${printed.url}`, { headers: bearer(owner.key) });
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'application/pdf');
    assert.equal(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 5)
        .toString('latin1'),
      '%PDF-',
    );
    const foreign = await fetch(`${stack.gateway.url}${printed.url}`, {
      headers: bearer(stranger.key),
    });
    assert.equal(foreign.status, 404);

    const details = await json(await call(owner, 'GET', `/session/${id}/details`), 200);
    assert.deepEqual(details.pdfs, [(printed.pdf as string).split('/')[1]]);
    assert.deepEqual(details.screenshots, []);

    const long = await json(
      await call(owner, 'POST', `/session/${id}/navigate`, { url: `${site.origin}/long` }),
      200,
    );
    assert.equal(long.title, 'Long');
    const sheets = await json(await call(owner, 'POST', `/session/${id}/pdf`, { landscape: true }), 200);
    assert.ok((sheets.pages as number) > 1, `a long page prints on ${sheets.pages as number} pages`);

    await call(owner, 'POST', `/session/${id}/close`);
    // The PDF outlives its session.
    const kept = await fetch(`${stack.gateway.url}${printed.url}`, { headers: bearer(owner.key) });
    assert.equal(kept.status, 200);

    const invalid = await call(owner, 'POST', `/session/${id}/pdf`, { format: 'A0' });
    assert.equal(invalid.status, 400);
    assert.equal((await errorOf(invalid)).param, 'format');

    await untilUsage(
      () => usageAroundToday(stack.gateway, owner.key),
      (totals) => totals['browser/null/pdfs'] === 2,
      'two PDFs',
    );
  });
});
