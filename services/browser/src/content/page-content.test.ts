import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { SwitchboardError } from '@switchboard/errors';
import { type ContentFormat, readPageContent } from './page-content.js';
import { HUGE_PAGE_BYTES, startTestSite, type TestSite } from './test-site.js';

/**
 * Content extraction against Debian's Chromium and a local site: real pages, real DOM, real
 * Markdown, read the way the session service reads them.
 */

const ALL: ContentFormat[] = ['html', 'text', 'markdown', 'links', 'metadata'];
const MB = 1024 * 1024;

let browser: Browser;
let site: TestSite;

before(async () => {
  site = await startTestSite();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    // Root in a container: no user namespaces for Chromium's sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run'],
  });
});
after(async () => {
  await browser?.close();
  await site?.close();
});

async function open(path: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${site.origin}${path}`, { timeout: 120_000 });
  return page;
}

describe('the whole page', () => {
  let page: Page;
  before(async () => {
    page = await open('/article/index.html');
  });
  after(() => page.close());

  it('Markdown has the headings, a GFM table, nested lists, fenced code and absolute links', async () => {
    const { markdown, truncated, warnings, url, title } = await readPageContent(page, {
      formats: ['markdown'],
      maxBytes: MB,
    });
    assert.equal(url, `${site.origin}/article/index.html`);
    assert.equal(title, 'Tide tables of the north');
    assert.equal(truncated, false);
    assert.deepEqual(warnings, []);
    const md = markdown!;
    assert.match(md, /^# Tide tables of the north$/m);
    assert.match(md, /^## Method$/m);
    assert.ok(
      md.includes(
        '| Harbour | High water | Range (m) |\n| --- | --- | --- |\n| Northport | 06:12 | 4.1 |\n| Eastness | 06:40 | 3.7 |',
      ),
      md,
    );
    assert.match(md, /^-\s+Instruments\n\s{4}-\s+Tide pole\n\s{4}-\s+Float gauge\n\s{8}-\s+Stilling well$/m);
    assert.match(md, /^1\.\s+Measure\n2\.\s+Average$/m);
    assert.match(md, /^-\s+\[x\]\s+Calibrated\n-\s+\[ \]\s+Audited$/m);
    assert.ok(md.includes('```js\nconst range = high - low; // ``` inside\nconsole.log(range);\n```'), md);
    assert.ok(md.includes('```\n  indented\n    preformatted\n```'), 'a bare <pre> is a fenced block');
    assert.ok(md.includes('~~old~~'));
    assert.ok(md.includes(`[gauge guide](${site.origin}/docs/gauges.html)`));
    assert.ok(md.includes(`[next page](${site.origin}/article/index.html?page=2)`));
    assert.ok(md.includes(`[method](${site.origin}/article/index.html#method)`));
    assert.ok(md.includes(`![A tide gauge](${site.origin}/article/img/gauge.png)`));
    assert.ok(!md.includes('javascript:'), 'script links lose their target');
    // The child frame is a link to its document, never inlined.
    assert.ok(md.includes(`[Tide widget](${site.origin}/frame)`));
    assert.ok(!md.includes('FRAME-TEXT-NOT-INLINED'));
    for (const never of [
      'SCRIPT-TEXT',
      'TEMPLATE-TEXT',
      'NOSCRIPT-TEXT',
      'color: #123',
      'Hidden paragraph',
    ]) {
      assert.ok(!md.includes(never), `no ${never} in the Markdown`);
    }
  });

  it('links are absolute, in document order, http(s) and mailto only', async () => {
    const { links } = await readPageContent(page, { formats: ['links'], maxBytes: MB });
    assert.deepEqual(links, [
      { url: `${site.origin}/`, text: 'Home' },
      { url: `${site.origin}/about`, text: 'About us' },
      { url: `${site.origin}/docs/gauges.html`, text: 'gauge guide' },
      { url: `${site.origin}/article/index.html?page=2`, text: 'next page' },
      { url: `${site.origin}/article/index.html#method`, text: 'method' },
      { url: 'mailto:tides@example.org', text: 'write to us' },
      { url: `${site.origin}/privacy`, text: 'Privacy' },
    ]);
  });

  it('metadata comes from <title>, <meta>, OpenGraph and the canonical link', async () => {
    const { metadata } = await readPageContent(page, { formats: ['metadata'], maxBytes: MB });
    assert.deepEqual(metadata, {
      title: 'Tide tables of the north',
      description: 'How tides are measured, with tables.',
      lang: 'en',
      canonical_url: `${site.origin}/articles/tides`,
      og: { title: 'Tide tables (OG)', image: 'https://cdn.example/first.png', type: 'article' },
    });
  });

  it('text is the visible text: no template, script, style or hidden element', async () => {
    const { text } = await readPageContent(page, { formats: ['text'], maxBytes: MB });
    assert.match(text!, /Tide tables of the north/);
    assert.match(text!, /Harbour\tHigh water\tRange \(m\)/);
    for (const never of ['SCRIPT-TEXT', 'TEMPLATE-TEXT', 'NOSCRIPT-TEXT', 'Hidden paragraph', 'FRAME-TEXT']) {
      assert.ok(!text!.includes(never), `no ${never} in the text`);
    }
  });

  it('html is the live DOM: what was typed, ticked and chosen shows, a password does not', async () => {
    await page.fill('#name', 'Ada <Lovelace> & co');
    await page.fill('#note', 'typed note');
    await page.fill('#secret', 'hunter2');
    await page.check('#agree');
    await page.selectOption('#port', 'e');
    const { html } = await readPageContent(page, { formats: ['html'], maxBytes: MB });
    assert.ok(html!.startsWith('<!DOCTYPE html>\n<html lang="en">'));
    assert.ok(html!.includes('<input id="name" name="name" value="Ada &lt;Lovelace&gt; &amp; co">'), html);
    assert.ok(html!.includes('<textarea id="note" name="note">typed note</textarea>'));
    assert.ok(html!.includes('<input id="agree" type="checkbox" name="agree" checked="">'));
    assert.ok(html!.includes('<option value="e" selected="">Eastness</option>'));
    assert.ok(!html!.includes('hunter2'));
    // The page's own DOM is untouched: its attributes still hold the values it was served with.
    assert.equal(await page.getAttribute('#name', 'value'), 'initial');
  });
});

describe('selector', () => {
  let page: Page;
  before(async () => {
    page = await open('/article/index.html');
  });
  after(() => page.close());

  it('limits every format to the subtree (metadata still describes the document)', async () => {
    const content = await readPageContent(page, { formats: ALL, selector: '#story table', maxBytes: MB });
    assert.ok(content.html!.startsWith('<table>') && content.html!.endsWith('</table>'));
    assert.equal(content.text, 'Harbour\tHigh water\tRange (m)\nNorthport\t06:12\t4.1\nEastness\t06:40\t3.7');
    assert.equal(
      content.markdown,
      '| Harbour | High water | Range (m) |\n| --- | --- | --- |\n| Northport | 06:12 | 4.1 |\n| Eastness | 06:40 | 3.7 |',
    );
    assert.deepEqual(content.links, []);
    assert.equal(content.metadata?.title, 'Tide tables of the north');
    const nav = await readPageContent(page, {
      formats: ['links', 'markdown'],
      selector: 'nav',
      maxBytes: MB,
    });
    assert.deepEqual(
      nav.links!.map((l) => l.text),
      ['Home', 'About us'],
    );
    assert.ok(!nav.markdown!.includes('Tide'));
  });

  it('waits for an element that appears later', async () => {
    const late = await open('/late');
    try {
      const { text } = await readPageContent(late, { formats: ['text'], selector: '#late', maxBytes: MB });
      assert.equal(text, 'Arrived late');
    } finally {
      await late.close();
    }
  });

  it('no match within the wait → element_not_found on selector; a bad selector → invalid_request', async () => {
    const started = Date.now();
    await assert.rejects(
      readPageContent(page, {
        formats: ['markdown'],
        selector: '#nowhere',
        selectorTimeoutMs: 300,
        maxBytes: MB,
      }),
      (error: unknown) =>
        error instanceof SwitchboardError && error.code === 'element_not_found' && error.param === 'selector',
    );
    assert.ok(Date.now() - started >= 300);
    await assert.rejects(
      readPageContent(page, { formats: ['text'], selector: 'p[', maxBytes: MB }),
      (error: unknown) =>
        error instanceof SwitchboardError && error.code === 'invalid_request' && error.param === 'selector',
    );
  });
});

describe('main_content', () => {
  it('keeps the article and drops navigation and footer', async () => {
    const page = await open('/article/index.html');
    try {
      const content = await readPageContent(page, { formats: ALL, mainContent: true, maxBytes: MB });
      assert.deepEqual(content.warnings, []);
      for (const format of ['markdown', 'text', 'html'] as const) {
        const value = content[format]!;
        assert.match(value, /Tides rise and fall twice a day/, format);
        assert.ok(!value.includes('About us'), `${format} has no navigation`);
        assert.ok(!value.includes('Footer text'), `${format} has no footer`);
      }
      assert.ok(content.markdown!.includes('| Harbour | High water | Range (m) |'));
      assert.ok(content.markdown!.includes(`[gauge guide](${site.origin}/docs/gauges.html)`));
      assert.ok(!content.markdown!.includes('Hidden paragraph'));
      assert.deepEqual(
        content.links!.map((l) => l.url),
        [
          `${site.origin}/docs/gauges.html`,
          `${site.origin}/article/index.html?page=2`,
          `${site.origin}/article/index.html#method`,
          'mailto:tides@example.org',
        ],
      );
    } finally {
      await page.close();
    }
  });

  it('nothing article-like → the whole page and the main_content_empty warning', async () => {
    const page = await open('/empty');
    try {
      const content = await readPageContent(page, {
        formats: ['markdown', 'html'],
        mainContent: true,
        maxBytes: MB,
      });
      assert.deepEqual(content.warnings, ['main_content_empty']);
      assert.equal(content.markdown, `[A](${site.origin}/a) [B](${site.origin}/b)`);
      assert.ok(content.html!.startsWith('<!DOCTYPE html>'));
    } finally {
      await page.close();
    }
  });
});

describe('a hostile page', () => {
  it("cannot falsify or observe the extraction by replacing its main world's built-ins", async () => {
    const page = await open('/hostile');
    try {
      await page.fill('#field', 'typed');
      const mutationsBefore = await page.evaluate('window.mutations');
      for (const mainContent of [false, true]) {
        const content = await readPageContent(page, { formats: ALL, mainContent, maxBytes: MB });
        assert.equal(content.title, 'Hostile');
        assert.equal(content.text, 'Real heading\n\nReal text with a real link.');
        assert.equal(
          content.markdown,
          `# Real heading\n\nReal text with [a real link](${site.origin}/real).`,
        );
        assert.deepEqual(content.links, [{ url: `${site.origin}/real`, text: 'a real link' }]);
        assert.equal(content.metadata?.lang, 'de');
        assert.ok(content.html!.includes('<input id="field" value="typed">'));
        // (The html holds the page's script, which names its forgeries; nothing else may.)
        const read = JSON.stringify({ ...content, html: undefined });
        assert.ok(!read.includes('FORGED') && !read.includes('evil.example'), read);
      }
      const selected = await readPageContent(page, { formats: ['text'], selector: 'main p', maxBytes: MB });
      assert.equal(selected.text, 'Real text with a real link.');
      // None of the page's replacements ran, and its MutationObserver saw nothing of the copies.
      assert.deepEqual(await page.evaluate('window.calls'), []);
      assert.equal(await page.evaluate('window.mutations'), mutationsBefore);
    } finally {
      await page.close();
    }
  });
});

describe('character sets', () => {
  it('windows-1252 and Shift_JIS pages come out as Unicode', async () => {
    const page = await open('/cp1252');
    try {
      const western = await readPageContent(page, {
        formats: ['text', 'markdown', 'metadata'],
        maxBytes: MB,
      });
      assert.equal(western.text, 'Café “quoted” € 5');
      assert.equal(western.markdown, 'Café “quoted” € 5');
      assert.equal(western.metadata?.title, 'Café');
      await page.goto(`${site.origin}/sjis`);
      const japanese = await readPageContent(page, { formats: ['text', 'html'], maxBytes: MB });
      assert.equal(japanese.title, '日本語');
      assert.equal(japanese.text, '日本語');
      assert.ok(japanese.html!.includes('<p>日本語</p>'));
    } finally {
      await page.close();
    }
  });

  it('the bound cuts on a character boundary, never inside one', async () => {
    const page = await open('/sjis');
    try {
      // Each character is 3 bytes of UTF-8: 7 bytes hold two of them.
      const { text, truncated } = await readPageContent(page, { formats: ['text'], maxBytes: 7 });
      assert.equal(text, '日本');
      assert.equal(truncated, true);
    } finally {
      await page.close();
    }
  });
});

describe('a 20 MB page', () => {
  it('is cut to the bound with truncated: true, without the worker holding the whole page', async (t) => {
    const page = await open('/huge');
    try {
      const maxBytes = 5 * MB;
      // Resident memory hardly shrinks within a second, so its growth over the call shows the peak
      // (the conversion is synchronous: a heap sampler would not run during it).
      const rssBefore = process.memoryUsage().rss;
      const started = Date.now();
      const content = await readPageContent(page, { formats: ALL, maxBytes });
      const elapsed = Date.now() - started;
      assert.equal(content.truncated, true);
      for (const format of ['html', 'text', 'markdown'] as const) {
        const bytes = Buffer.byteLength(content[format]!);
        // The Markdown's source was cut at the bound too, and Markdown is shorter than its HTML.
        const least = format === 'markdown' ? maxBytes * 0.5 : maxBytes * 0.99;
        assert.ok(bytes <= maxBytes && bytes > least, `${format}: ${bytes} bytes`);
        assert.ok(!content[format]!.includes('\uFFFD'), `${format} cut inside a character`);
      }
      assert.ok(content.markdown!.startsWith('# Huge page\n\nParagraph 0: tides rise'));
      assert.ok(Buffer.byteLength(JSON.stringify(content.links)) <= maxBytes);
      assert.deepEqual(content.links![0], { url: `${site.origin}/p/0`, text: 'more 0' });
      const grownMb = Math.round((process.memoryUsage().rss - rssBefore) / MB);
      t.diagnostic(
        `${HUGE_PAGE_BYTES / MB} MB page, all formats at ${maxBytes / MB} MB: ${elapsed} ms, RSS +${grownMb} MB`,
      );
      // The page is four times the bound; what the worker holds must not scale with the page.
      assert.ok(grownMb < 600, `RSS grew by ${grownMb} MB`);
    } finally {
      await page.close();
    }
  });
});
