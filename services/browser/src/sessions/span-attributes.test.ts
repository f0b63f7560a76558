import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SwitchboardError } from '@switchboard/errors';
import { actionOutcome, urlOrigin } from './span-attributes.js';

test('a navigation span names the scheme and host, never the path, query string or credentials', () => {
  const attributes = urlOrigin('https://user:pw@example.com:8443/reset?token=s3cret#frag');
  assert.deepEqual(attributes, { 'url.scheme': 'https', 'server.address': 'example.com' });
  assert.doesNotMatch(JSON.stringify(attributes), /s3cret|reset|pw|frag/);
});

test('a URL that does not parse adds nothing', () => {
  assert.deepEqual(urlOrigin('not a url ?token=s3cret'), {});
});

test('the outcome is the error code the caller gets, or error', () => {
  assert.equal(actionOutcome(new SwitchboardError('url_not_allowed')), 'url_not_allowed');
  assert.equal(actionOutcome(new Error('boom')), 'error');
});
