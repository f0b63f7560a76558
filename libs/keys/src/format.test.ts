import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatApiKey, keyPrefix, newKeyId, newSecret, parseApiKey } from './format.js';

test('generated keys round-trip through parseApiKey', () => {
  for (let i = 0; i < 200; i++) {
    const id = newKeyId();
    const secret = newSecret();
    assert.match(id, /^[a-z2-7]{12}$/);
    assert.match(secret, /^[0-9A-Za-z]{33}$/);
    assert.deepEqual(parseApiKey(formatApiKey(id, secret)), { id, secret });
  }
});

test('secrets are distinct and use the whole alphabet', () => {
  const seen = new Set<string>();
  const chars = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const s = newSecret();
    seen.add(s);
    for (const c of s.slice(1)) chars.add(c); // the leading char is biased towards small digits
  }
  assert.equal(seen.size, 500);
  assert.equal(chars.size, 62);
});

test('parseApiKey is strict', () => {
  const good = formatApiKey(newKeyId(), newSecret());
  for (const bad of [
    '',
    good + 'x',
    good.slice(0, -1),
    ' ' + good,
    good.replace('sb_', 'sk_'),
    good.replace('sb_', 'SB_'),
    `Bearer ${good}`,
    good.replace(/_([^_]+)$/, '-$1'),
    'sb_ABCDEFGHIJKL_' + newSecret(),
    'sb_abcdefghijk1_' + newSecret(),
    'sb__' + newSecret(),
    null,
    42,
  ]) {
    assert.equal(parseApiKey(bad), null, String(bad));
  }
});

test('prefix shows four secret chars', () => {
  assert.equal(keyPrefix('abcdefghijkl', 'XyZ0rest'), 'sb_abcdefghijkl_XyZ0');
});
