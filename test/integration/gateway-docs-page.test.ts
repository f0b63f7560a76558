import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, watchedPage } from '../support/chromium-page.js';
import { startStack, type Stack } from '../support/stack.js';

interface Operation {
  summary?: string;
}
interface Document {
  info: { title: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

/**
 * GET /docs in Debian's Chromium: Scalar's API reference, served by the gateway from node_modules,
 * renders the gateway's own /openapi.json under the page's Content-Security-Policy, and the page
 * reaches nothing but the gateway.
 */
describe('/docs in Chromium', { timeout: 120_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let doc: Document;

  before(async () => {
    [stack, browser] = await Promise.all([startStack(), launchChromium()]);
    doc = (await (await fetch(`${stack.gateway.url}/openapi.json`)).json()) as Document;
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  test('the page is Scalar under a CSP that allows only this origin', async () => {
    const res = await fetch(`${stack.gateway.url}/docs`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/, 'only same-origin scripts: no inline script, no eval');
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /https?:|\*/, 'no other origin');
    const html = await res.text();
    assert.match(html, /<script src="\/docs\/scalar\.js"><\/script>/);
    assert.doesNotMatch(html, /<script>|<style>|\son\w+=/i, 'nothing inline');

    const bundle = await fetch(`${stack.gateway.url}/docs/scalar.js`);
    assert.equal(bundle.status, 200);
    assert.match(bundle.headers.get('content-type') ?? '', /javascript/);
    assert.match(
      await bundle.text(),
      /@scalar\/api-reference 1\.46\./,
      "Scalar's standalone bundle, as pinned",
    );
  });

  test('renders the operations and schemas of /openapi.json with no console error and no outside request', async () => {
    const query = doc.paths['/query']?.post;
    const keys = doc.paths['/admin/api/keys']?.post;
    assert.ok(query?.summary && keys?.summary, 'the document has summaries to show');
    const schema = 'QueryRequest';
    const querySchema = doc.components.schemas[schema];
    assert.ok(querySchema?.properties?.prompt, `the document has ${schema}`);

    const { page, requests, problems } = await watchedPage(browser, stack.gateway.url);
    await page.goto(`${stack.gateway.url}/docs`, { waitUntil: 'load' });

    // The document's title, and the first tag's operation by summary, method and path.
    await page.getByRole('heading', { name: doc.info.title }).first().waitFor({ timeout: 30_000 });
    const queryOperation = page
      .locator('section')
      .filter({ has: page.getByRole('heading', { name: query.summary, exact: true }) })
      .filter({ hasText: 'POST' })
      .filter({ hasText: '/query' });
    await queryOperation.first().waitFor();
    // Its request body, from the QueryRequest schema: every property by name.
    const lines = (await queryOperation.first().innerText()).split('\n').map((line) => line.trim());
    for (const property of Object.keys(querySchema.properties ?? {})) {
      assert.ok(lines.includes(property), `POST /query shows its body's ${property}`);
    }
    // Another tag, opened from the sidebar as a reader would.
    await page.getByRole('button', { name: /^Administration/ }).click();
    await page.getByRole('heading', { name: keys.summary, exact: true }).first().waitFor();
    // The named schemas of components.schemas, listed under Models.
    await page.getByRole('button', { name: /^Models/ }).click();
    await page.getByText(schema, { exact: true }).first().waitFor();

    const text = await page.locator('body').innerText();
    assert.doesNotMatch(text, /API\.md|§\s*\d/, 'the public reference never cites the internal contract');
    assert.ok(
      requests.some((url) => url === `${stack.gateway.url}/openapi.json`),
      'Scalar read the gateway document',
    );
    assert.deepEqual(problems(), []);
  });
});
