import assert from 'node:assert/strict';
import { test } from 'node:test';
import { errors as playwrightErrors } from 'playwright-core';
import { elementError, isSelectorSyntaxError } from './page-errors.js';

// What Playwright 1.x with Debian's Chromium throws for selectors it cannot parse, verbatim
// (less the call log). The integration tests drive the same inputs through a real worker.
const unparsable = [
  'page.fill: Unsupported token "@qq20" while parsing css selector "9@qq20^a2". Did you mean to CSS.escape it?',
  'page.waitForSelector: Unexpected token "" while parsing css selector "div[". Did you mean to CSS.escape it?',
  'page.fill: Unknown engine "foo" while parsing selector foo=bar',
  "page.fill: SyntaxError: Failed to execute 'querySelectorAll' on 'Document': '#a:nosuchpseudo' is not a valid selector.",
  "page.waitForSelector: SyntaxError: Failed to execute 'evaluate' on 'Document': The string '//[' is not a valid XPath expression.",
];

test('a selector the parsers refuse is a 400 invalid_request naming selector', () => {
  for (const message of unparsable) {
    assert.ok(isSelectorSyntaxError(new Error(message)), message);
    const mapped = elementError(new Error(message), '9@qq20^a2');
    assert.equal(mapped.code, 'invalid_request', message);
    assert.equal(mapped.httpStatus, 400);
    assert.equal(mapped.param, 'selector');
    assert.ok(!mapped.message.includes('9@qq20'), 'the message does not echo the parser text');
  }
});

test('a selector that never matched is element_not_found; anything else stays internal', () => {
  const timeout = new playwrightErrors.TimeoutError('page.fill: Timeout 5000ms exceeded.');
  assert.equal(elementError(timeout, '#nope').code, 'element_not_found');
  assert.equal(elementError(timeout, '#nope').param, 'selector');
  const crashed = new Error('page.fill: Target page, context or browser has been closed');
  assert.equal(isSelectorSyntaxError(crashed), false);
  assert.equal(elementError(crashed, '#a').code, 'internal');
});
