import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import { test } from 'node:test';
import { PEPPERED_ALG, SecretHasher, secretDigest } from './secret-hash.js';

const pepper = 'unit-test-key-pepper-0123456789abcdef';
const id = 'abcdefghijkl';
const secret = 'S3cretS3cretS3cretS3cretS3cretS3c';

test('the stored hash is HMAC-SHA256 under the pepper of the key id and the secret’s SHA-256', () => {
  const digest = createHash('sha256').update(secret).digest();
  const expected = createHmac('sha256', pepper).update(`switchboard-key-v1\0${id}\0`).update(digest).digest();
  const hasher = new SecretHasher(pepper);
  assert.deepEqual(hasher.hash(id, secret), expected);
  assert.deepEqual(secretDigest(secret), digest);
  assert.deepEqual(hasher.fromDigest(id, digest), expected, 'a legacy digest re-hashes to the same value');
  assert.equal(PEPPERED_ALG, 'hmac-sha256');
});

test('another pepper or another key id gives an unrelated hash', () => {
  const hasher = new SecretHasher(pepper);
  const hash = hasher.hash(id, secret);
  assert.notDeepEqual(new SecretHasher(`${pepper}x`).hash(id, secret), hash);
  assert.notDeepEqual(hasher.hash('bcdefghijklm', secret), hash);
  assert.notDeepEqual(hash, secretDigest(secret));
});

test('a short pepper is refused, and the pepper never shows when a hasher is printed', () => {
  assert.throws(() => new SecretHasher('x'.repeat(31)), /at least 32 characters/);
  const hasher = new SecretHasher(pepper);
  assert.ok(!JSON.stringify(hasher).includes(pepper));
  assert.ok(!inspect(hasher, { showHidden: true, depth: 5 }).includes(pepper));
  assert.ok(!inspect(hasher, { showHidden: true, depth: 5 }).includes(Buffer.from(pepper).toString('hex')));
});
