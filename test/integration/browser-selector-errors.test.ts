import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { errorOf } from '../support/stack.js';

/**
 * A selector the browser cannot parse is the caller's mistake: 400 invalid_request naming
 * `selector`, from a real browser worker driving Debian's Chromium, never a 500; and the session
 * goes on working afterwards.
 */
describe('unparsable selectors on input and submit', { timeout: 120_000 }, () => {
  let stack: BrowserStack;
  let owner: CreatedKey;
  let session: string;

  before(async () => {
    stack = await startBrowserStack();
    owner = await createKey(stack.gateway, { tier: 'professional' });
    const created = await call('POST', '/session/create');
    assert.equal(created.status, 201, await created.clone().text());
    session = `/session/${((await created.json()) as { session_id: string }).session_id}`;
    const loaded = await call('POST', `${session}/navigate`, { url: `${stack.site.origin}/form` });
    assert.equal(loaded.status, 200, await loaded.clone().text());
  });
  after(async () => stack?.stop());

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.gateway.url}/api/browser${path}`, {
      method,
      headers: {
        ...bearer(owner.key),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  // Playwright's CSS parser, its engine names, and Chromium's own CSS and XPath parsers.
  const unparsable = [
    '9@qq20^a2',
    'div[',
    '#name >> ',
    'a,,b',
    'nosuchengine=x',
    '#name:no-such-pseudo',
    'xpath=//[',
  ];

  it('answers 400 invalid_request with param selector, fast, for input and submit', async () => {
    for (const selector of unparsable) {
      for (const [action, body] of [
        ['input', { selector, text: 'x' }],
        ['submit', { selector }],
      ] as const) {
        const started = Date.now();
        const res = await call('POST', `${session}/${action}`, body);
        const what = `${action} ${JSON.stringify(selector)}`;
        assert.equal(res.status, 400, `${what}: ${await res.clone().text()}`);
        const error = await errorOf(res);
        assert.equal(error.code, 'invalid_request', what);
        assert.equal(error.param, 'selector', what);
        assert.equal(error.request_id, res.headers.get('x-request-id'), what);
        assert.ok(!error.message.includes('while parsing'), `${what}: no parser text in the message`);
        assert.ok(Date.now() - started < 4_000, `${what}: refused at once, not after the 5 s wait`);
      }
    }
  });

  it('leaves the session working: a valid selector still types and submits', async () => {
    const typed = await call('POST', `${session}/input`, { selector: '#name', text: 'Ada' });
    assert.equal(typed.status, 200, await typed.clone().text());
    const submitted = await call('POST', `${session}/submit`, { selector: '#go' });
    assert.equal(submitted.status, 200, await submitted.clone().text());
    assert.match(((await submitted.json()) as { url: string }).url, /\/result\?name=Ada$/);
  });
});
