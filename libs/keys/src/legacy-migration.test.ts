import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, headers, type KV, type NatsConnection } from 'nats';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import { formatApiKey, newKeyId, newSecret } from './format.js';
import { encodeRecord } from './kv-write.js';
import { unmigratedLegacySecrets, withPepperedTwins } from './legacy-migration.js';
import type { KeyRecord } from './record.js';
import { PEPPERED_ALG, SecretHasher, secretDigest } from './secret-hash.js';
import { KeyStore } from './store.js';

const pepper = 'migration-test-key-pepper-0123456789abcdef';
let nats: NatsHandle;
let nc: NatsConnection;
const stores: KeyStore[] = [];
let bucketCount = 0;

before(async () => {
  nats = await startNats();
  // The operator's user: the test writes records the way someone with access to the store would.
  nc = await connect(nats.connectOptions('operator'));
});
after(async () => {
  for (const store of stores) await store.close();
  await nc.close();
  await nats.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A record as the gateway wrote it before peppering: `hash` is the secret's plain SHA-256. */
function legacyRecord(id: string, secret: string): KeyRecord {
  return {
    id,
    name: 'from before peppering',
    tier: 'basic',
    ip_allowlist: [],
    rate_limit_per_minute: null,
    created_at: new Date().toISOString(),
    status: 'active',
    prefix: `sb_${id}_${secret.slice(0, 4)}`,
    secrets: [{ hash: secretDigest(secret).toString('hex'), expires_at: null }],
  };
}

async function openStore(bucket: string, migrateLegacyWrittenBefore?: number): Promise<KeyStore> {
  const store = await KeyStore.open(nc, { bucket, pepper, migrateLegacyWrittenBefore });
  stores.push(store);
  await store.ready;
  return store;
}

async function newBucket(): Promise<{ bucket: string; kv: KV }> {
  const bucket = `keys_migration_${++bucketCount}`;
  return { bucket, kv: await nc.jetstream().views.kv(bucket, { history: 1 }) };
}

const stored = async (kv: KV, id: string) => (await kv.get(id))!.json<KeyRecord>();

test('twins are added once, next to the legacy entries, and nothing else changes', () => {
  const hasher = new SecretHasher(pepper);
  const id = newKeyId();
  const legacy = legacyRecord(id, newSecret());
  const migrated = withPepperedTwins(legacy, hasher);
  assert.equal(migrated.secrets.length, 2);
  assert.equal(migrated.secrets[0]!.alg, PEPPERED_ALG);
  assert.deepEqual(migrated.secrets[1], legacy.secrets[0], 'the legacy entry stays for older replicas');
  assert.deepEqual({ ...migrated, secrets: [] }, { ...legacy, secrets: [] });
  assert.deepEqual(unmigratedLegacySecrets(migrated, hasher), []);
  assert.deepEqual(withPepperedTwins(migrated, hasher), migrated, 'idempotent');
});

test('legacy records are refused by default; the migration peppers only those written before its cutoff', async () => {
  const { bucket, kv } = await newBucket();
  const [earlyId, lateId] = [newKeyId(), newKeyId()];
  const [earlySecret, lateSecret] = [newSecret(), newSecret()];
  await kv.put(earlyId, encodeRecord(legacyRecord(earlyId, earlySecret)));
  await sleep(30);
  const cutoff = Date.now();
  await sleep(30);
  // Written after the cutoff: what a store writer would plant once the upgrade is under way.
  await kv.put(lateId, encodeRecord(legacyRecord(lateId, lateSecret)));

  const plain = await openStore(bucket);
  assert.equal(plain.authenticate(formatApiKey(earlyId, earlySecret)), null, 'refused without migration');

  const migrating = await openStore(bucket, cutoff);
  assert.equal(migrating.authenticate(formatApiKey(earlyId, earlySecret))?.id, earlyId);
  assert.equal(migrating.authenticate(formatApiKey(lateId, lateSecret)), null, 'written after the cutoff');
  assert.equal((await stored(kv, lateId)).secrets.length, 1, 'the late record is left as it was');
  const deadline = Date.now() + 2000;
  while (plain.authenticate(formatApiKey(earlyId, earlySecret)) === null) {
    assert.ok(Date.now() < deadline, 'the migrated record reaches the other replica');
    await sleep(20);
  }
});

test('a legacy entry added after the migration is refused, even by a replica opened with the same cutoff', async () => {
  const { bucket, kv } = await newBucket();
  const id = newKeyId();
  const secret = newSecret();
  await kv.put(id, encodeRecord(legacyRecord(id, secret)));
  await sleep(30);
  const cutoff = Date.now();
  const first = await openStore(bucket, cutoff);
  assert.ok(first.authenticate(formatApiKey(id, secret)));

  const forged = newSecret();
  const record = await stored(kv, id);
  record.secrets.push({ hash: secretDigest(forged).toString('hex'), expires_at: null });
  await kv.put(id, encodeRecord(record));
  const again = await openStore(bucket, cutoff);
  assert.equal(again.authenticate(formatApiKey(id, forged)), null);
  assert.equal(first.authenticate(formatApiKey(id, forged)), null);
  assert.equal(again.authenticate(formatApiKey(id, secret))?.id, id, 'the real secret still works');
  assert.equal((await stored(kv, id)).secrets.length, 3, 'the forged entry was not migrated');
});

test('a writer cannot backdate a record past the cutoff with forged timestamp headers', async () => {
  const { bucket } = await newBucket();
  const cutoff = Date.now();
  await sleep(30);
  const id = newKeyId();
  const secret = newSecret();
  const forged = headers();
  forged.set('Nats-Time-Stamp', '2001-01-01T00:00:00Z');
  await nc
    .jetstream()
    .publish(`$KV.${bucket}.${id}`, encodeRecord(legacyRecord(id, secret)), { headers: forged });
  const store = await openStore(bucket, cutoff);
  assert.equal(store.authenticate(formatApiKey(id, secret)), null);
});

test('rotation and revocation of a migrated key work as for any other', async () => {
  const { bucket, kv } = await newBucket();
  const id = newKeyId();
  const secret = newSecret();
  await kv.put(id, encodeRecord(legacyRecord(id, secret)));
  await sleep(30);
  const store = await openStore(bucket, Date.now());
  const { key: rotated } = await store.rotate(id, 60);
  assert.equal(store.authenticate(rotated)?.id, id);
  assert.equal(store.authenticate(formatApiKey(id, secret))?.id, id, 'the old secret works during the grace');
  assert.ok(
    (await stored(kv, id)).secrets.every((s) => s.expires_at !== null || s.alg === PEPPERED_ALG),
    'only the new, peppered secret has no end',
  );
  await store.rotate(id, 0);
  assert.equal(store.authenticate(formatApiKey(id, secret)), null);
  assert.deepEqual(
    (await stored(kv, id)).secrets.map((s) => s.alg),
    [PEPPERED_ALG],
    'rotation without grace drops the legacy entry too',
  );
});
