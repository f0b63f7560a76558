import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatApiKey, newSecret } from './format.js';
import type { KeyRecord, StoredSecret } from './record.js';
import { PEPPERED_ALG, SecretHasher, secretDigest } from './secret-hash.js';
import { KeyView } from './view.js';

const hasher = new SecretHasher('view-test-key-pepper-0123456789abcdef');
const attackerHasher = new SecretHasher('a-pepper-the-attacker-guessed-0123456789');

function record(id: string, secrets: StoredSecret[]): KeyRecord {
  return {
    id,
    name: id,
    tier: 'basic',
    ip_allowlist: [],
    rate_limit_per_minute: null,
    created_at: '2026-01-01T00:00:00.000Z',
    status: 'active',
    prefix: `sb_${id}_xxxx`,
    secrets,
  };
}

const peppered = (id: string, secret: string, expiresAt: string | null = null): StoredSecret => ({
  alg: PEPPERED_ALG,
  hash: hasher.hash(id, secret).toString('hex'),
  expires_at: expiresAt,
});

test('a secret hashed with the pepper authenticates; one past its expiry does not', () => {
  const view = new KeyView(hasher);
  const [current, old] = [newSecret(), newSecret()];
  const past = new Date(Date.now() - 1000).toISOString();
  view.apply(
    record('aaaaaaaaaaaa', [peppered('aaaaaaaaaaaa', current), peppered('aaaaaaaaaaaa', old, past)]),
    1,
  );
  assert.equal(view.authenticate(formatApiKey('aaaaaaaaaaaa', current))?.id, 'aaaaaaaaaaaa');
  assert.equal(view.authenticate(formatApiKey('aaaaaaaaaaaa', old)), null);
});

test('hashes a store writer can make without the pepper never authenticate', () => {
  const view = new KeyView(hasher);
  const id = 'bbbbbbbbbbbb';
  const forged = newSecret();
  const digest = secretDigest(forged).toString('hex');
  const forgeries: [string, StoredSecret][] = [
    ['a legacy SHA-256 entry', { hash: digest, expires_at: null }],
    ['a SHA-256 marked as peppered', { alg: PEPPERED_ALG, hash: digest, expires_at: null }],
    [
      'an HMAC under another pepper',
      { alg: PEPPERED_ALG, hash: attackerHasher.hash(id, forged).toString('hex'), expires_at: null },
    ],
    ['an unknown alg', { alg: 'sha256', hash: digest, expires_at: null }],
  ];
  let revision = 0;
  for (const [what, secret] of forgeries) {
    view.apply(record(id, [peppered(id, newSecret()), secret]), ++revision);
    assert.equal(view.authenticate(formatApiKey(id, forged)), null, what);
  }
});

test("a hash copied from the writer's own key into another key's record does not act as that key", () => {
  const view = new KeyView(hasher);
  const own = newSecret();
  const ownHash = peppered('cccccccccccc', own);
  view.apply(record('cccccccccccc', [ownHash]), 1);
  view.apply(record('dddddddddddd', [peppered('dddddddddddd', newSecret()), ownHash]), 2);
  assert.equal(view.authenticate(formatApiKey('cccccccccccc', own))?.id, 'cccccccccccc');
  assert.equal(view.authenticate(formatApiKey('dddddddddddd', own)), null);
});
