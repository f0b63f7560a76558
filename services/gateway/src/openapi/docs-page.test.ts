import assert from 'node:assert/strict';
import { test } from 'node:test';
import { docsPage } from './docs-page.js';
import { openApiDocument } from './document.js';
import { assertSelfContainedPage, runPage, type FakeElement, type PageRun } from './page-test-support.js';

const nonce = 'bm9uY2Utb2YtdGhlLXRlc3Q+/=';

function serving(document: unknown, status = 200): PageRun {
  return runPage(docsPage(nonce), {
    respond: (call) => {
      assert.equal(call.url, '/openapi.json');
      return { status, body: document };
    },
  });
}

const operationsOf = (run: PageRun): FakeElement[] =>
  run.byId('content').findAll((e) => e.tagName === 'DETAILS' && e.id.startsWith('op-'));

test('the page is self-contained, nonced, and its script parses', () => {
  const html = docsPage(nonce);
  assertSelfContainedPage(html, nonce);
  assert.match(html, /fetch\('\/openapi\.json'/);
});

test('a nonce that is not base64 is refused rather than written into the page', () => {
  assert.throws(() => docsPage('"><script>'), /nonce/);
  assert.throws(() => docsPage(''), /nonce/);
});

test('renders every operation of the document, grouped by tag', async () => {
  const run = serving(openApiDocument);
  await run.settle();
  assert.doesNotMatch(run.byId('status').textContent, /Could not load/);
  assert.equal(run.byId('title').textContent, 'Switchboard API');

  const expected = Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
    Object.entries(item as Record<string, { summary: string; tags: readonly string[] }>).map(
      ([method, op]) => ({ path, method, op }),
    ),
  );
  const rendered = operationsOf(run);
  assert.equal(rendered.length, expected.length);
  for (const { path, method, op } of expected) {
    const node = rendered.find((e) => e.getAttribute('data-label') === `${method.toUpperCase()} ${path}`);
    assert.ok(node, `${method} ${path} is rendered`);
    assert.ok(node.textContent.includes(op.summary), `${method} ${path} shows its summary`);
    const section = node.parentNode!;
    assert.equal(section.id, `tag-${op.tags[0]!.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
  }
  const nav = run.byId('nav').textContent;
  for (const tag of openApiDocument.tags) assert.ok(nav.includes(tag.name), `nav lists ${tag.name}`);
});

test('request bodies show fields with types, ranges, defaults and required marks; responses show codes and headers', async () => {
  const run = serving(openApiDocument);
  await run.settle();
  const query = run.byId('op-query').textContent;
  for (const piece of [
    'prompt',
    'required',
    'temperature',
    '≥ 0, ≤ 2',
    'default 0.7',
    'max_tokens',
    'default 2048',
    'text/event-stream',
    'rate_limited',
    'Retry-After',
    'RateLimit-Policy',
  ]) {
    assert.ok(query.includes(piece), `/query shows ${piece}`);
  }
  const image = run.byId('op-generateimage').textContent;
  assert.ok(image.includes('multiple of 8') && image.includes('≤ 2048') && image.includes('default 20'));
  const keys = run.byId('op-createkey').textContent;
  assert.ok(keys.includes('admin token') && keys.includes('one of: "basic", "professional", "enterprise"'));
  const schemas = run.byId('schemas').findAll((e) => e.tagName === 'DETAILS');
  assert.equal(schemas.length, Object.keys(openApiDocument.components.schemas).length);
  assert.ok(run.byId('error-codes').textContent.includes('session_expired'));
});

test('text from the document is never parsed as markup', async () => {
  const hostile = {
    openapi: '3.1.0',
    info: { title: '<img src=x onerror=alert(1)>', version: '1', description: 'a `<b>code</b>` span' },
    tags: [{ name: '<script>alert(1)</script>', description: '' }],
    paths: {
      '/x': {
        get: {
          operationId: 'x',
          tags: ['<script>alert(1)</script>'],
          summary: '<img src=x onerror=alert(2)>',
          parameters: [{ name: '<i>p</i>', in: 'query', schema: { type: 'string', default: '</script>' } }],
          responses: { 200: { description: '<b>ok</b>' } },
        },
      },
    },
  };
  const run = serving(hostile);
  await run.settle();
  const all = [...run.document.body.descendants()];
  assert.ok(
    !all.some((e) => ['IMG', 'SCRIPT', 'B', 'I'].includes(e.tagName)),
    'no element made from document text',
  );
  assert.equal(run.byId('title').textContent, '<img src=x onerror=alert(1)>');
  const text = run.byId('content').textContent;
  assert.ok(
    text.includes('<img src=x onerror=alert(2)>') &&
      text.includes('<b>ok</b>') &&
      text.includes('"</script>"'),
  );
  assert.ok(
    all.some((e) => e.tagName === 'CODE' && e.textContent === '<b>code</b>'),
    'backticks become code elements holding text',
  );
});

test('a failed fetch is reported on the page', async () => {
  const run = serving({ error: { code: 'internal', message: 'x' } }, 500);
  await run.settle();
  assert.equal(run.byId('status').textContent, 'Could not load /openapi.json: HTTP 500');
  assert.equal(operationsOf(run).length, 0);
});

test('the filter hides operations that do not match, and expand-all opens them', async () => {
  const run = serving(openApiDocument);
  await run.settle();
  const filter = run.byId('filter');
  filter.value = 'session devtools';
  filter.dispatch('input');
  const visible = operationsOf(run).filter((e) => !e.hidden);
  assert.deepEqual(
    visible.map((e) => e.getAttribute('data-label')),
    ['GET /api/browser/session/{id}/devtools'],
  );
  assert.ok(run.byId('tag-language-model').hidden);
  filter.value = '';
  filter.dispatch('input');
  assert.ok(operationsOf(run).every((e) => !e.hidden));

  run.byId('expand').click();
  assert.ok(operationsOf(run).every((e) => e.open));
  assert.equal(run.byId('expand').textContent, 'Collapse all');
});
