import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type NatsConnection } from 'nats';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import { SwitchboardError } from '@switchboard/errors';
import { KeyStore } from './store.js';
import { formatApiKey, parseApiKey } from './format.js';

let nats: NatsHandle;
/** What every replica of these tests is configured with (KEY_PEPPER). */
const pepper = 'store-test-key-pepper-0123456789abcdef';
const connections: NatsConnection[] = [];
const stores: KeyStore[] = [];
let bucketCount = 0;

before(async () => {
  nats = await startNats();
});

after(async () => {
  for (const store of stores) await store.close();
  for (const nc of connections) await nc.close();
  await nats.stop();
});

async function newConnection(): Promise<NatsConnection> {
  const nc = await connect(nats.connectOptions('operator'));
  connections.push(nc);
  return nc;
}

/** Each test gets its own bucket, so tests cannot see each other's keys. */
async function openStores(
  count: number,
  options: { usageFlushIntervalMs?: number } = {},
): Promise<KeyStore[]> {
  const bucket = `keys_test_${++bucketCount}`;
  const opened: KeyStore[] = [];
  for (let i = 0; i < count; i++) {
    const store = await KeyStore.open(await newConnection(), { bucket, pepper, ...options });
    await store.ready;
    stores.push(store);
    opened.push(store);
  }
  return opened;
}

async function eventually(check: () => boolean, withinMs: number): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > withinMs) assert.fail(`condition not met within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

function sameSecretOtherBits(key: string): string {
  const parsed = parseApiKey(key)!;
  const last = parsed.secret.at(-1) === 'a' ? 'b' : 'a';
  return formatApiKey(parsed.id, parsed.secret.slice(0, -1) + last);
}

test('create then authenticate; malformed, unknown and wrong secrets are refused', async () => {
  const [store] = await openStores(1);
  const { record, key } = await store!.create({
    name: 'ci',
    tier: 'professional',
    ip_allowlist: ['10.0.0.0/8'],
    rate_limit_per_minute: 100,
  });
  assert.match(key, /^sb_[a-z2-7]{12}_[0-9A-Za-z]{33}$/);
  assert.equal(record.id, parseApiKey(key)!.id);
  assert.ok(key.startsWith(record.prefix));
  assert.equal(record.secrets.length, 1);
  assert.doesNotMatch(
    JSON.stringify(record),
    new RegExp(parseApiKey(key)!.secret),
    'the secret itself is never stored',
  );

  const authed = store!.authenticate(key);
  assert.equal(authed?.id, record.id);
  assert.equal(authed?.tier, 'professional');
  assert.deepEqual(authed?.ip_allowlist, ['10.0.0.0/8']);

  assert.equal(store!.authenticate('garbage'), null);
  assert.equal(store!.authenticate(key + ' '), null);
  assert.equal(store!.authenticate(sameSecretOtherBits(key)), null);
  const { key: other } = await store!.create({ name: 'other', tier: 'basic' });
  const unknown = formatApiKey('aaaaaaaaaaaa', parseApiKey(other)!.secret);
  assert.equal(store!.authenticate(unknown), null);
  // Someone else's secret with this key's id fails too.
  assert.equal(store!.authenticate(formatApiKey(record.id, parseApiKey(other)!.secret)), null);
});

test('a key created on one replica works on another, and revoke is seen within 2 s', async () => {
  const [a, b] = await openStores(2);
  const { record, key } = await a!.create({ name: 'shared', tier: 'basic' });
  await eventually(() => b!.authenticate(key) !== null, 2000);

  const revoked = await a!.revoke(record.id);
  assert.equal(revoked.status, 'revoked');
  assert.deepEqual(revoked.secrets, []);
  assert.equal(a!.authenticate(key), null, 'refused at once on the replica that revoked');
  const took = await eventually(() => b!.authenticate(key) === null, 2000);
  assert.ok(took < 2000);

  const listed = (await b!.list()).find((k) => k.id === record.id);
  assert.equal(listed?.status, 'revoked');
  assert.equal(JSON.stringify(listed).includes('hash'), false);
  await assert.rejects(
    a!.rotate(record.id, 0),
    (e: unknown) => e instanceof SwitchboardError && e.code === 'invalid_request',
  );
});

test('rotate with a grace period: both secrets work, then the old one stops', async () => {
  const [a, b] = await openStores(2);
  const { record, key: oldKey } = await a!.create({ name: 'rotating', tier: 'enterprise' });
  const { record: rotated, key: newKey } = await a!.rotate(record.id, 1);
  assert.equal(rotated.id, record.id, 'rotation keeps the id');
  assert.notEqual(rotated.prefix, record.prefix);
  assert.ok(newKey.startsWith(rotated.prefix));
  assert.equal(a!.authenticate(newKey)?.id, record.id);
  assert.equal(a!.authenticate(oldKey)?.id, record.id);
  await eventually(() => b!.authenticate(newKey) !== null, 2000);
  assert.equal(b!.authenticate(oldKey)?.id, record.id);

  await eventually(() => a!.authenticate(oldKey) === null && b!.authenticate(oldKey) === null, 2500);
  assert.ok(a!.authenticate(newKey));
  assert.ok(b!.authenticate(newKey));

  // The expired secret is pruned at the next rotation.
  const { record: again } = await a!.rotate(record.id, 60);
  assert.equal(again.secrets.length, 2);
});

test('rotate with grace 0: the old secret fails at once', async () => {
  const [store] = await openStores(1);
  const { record, key: oldKey } = await store!.create({ name: 'now', tier: 'basic' });
  const { key: newKey, record: rotated } = await store!.rotate(record.id, 0);
  assert.equal(store!.authenticate(oldKey), null);
  assert.equal(store!.authenticate(newKey)?.id, record.id);
  assert.equal(rotated.secrets.length, 1);
  await assert.rejects(
    store!.rotate(record.id, -1),
    (e: unknown) => e instanceof SwitchboardError && e.param === 'grace_seconds',
  );
});

test('update patches fields and keeps the rest; get reads the bucket', async () => {
  const [a, b] = await openStores(2);
  const { record, key } = await a!.create({
    name: 'before',
    tier: 'basic',
    ip_allowlist: ['192.168.0.0/16'],
  });
  const updated = await a!.update(record.id, { name: 'after', rate_limit_per_minute: 5 });
  assert.equal(updated.name, 'after');
  assert.equal(updated.rate_limit_per_minute, 5);
  assert.equal(updated.tier, 'basic');
  assert.deepEqual(updated.ip_allowlist, ['192.168.0.0/16']);
  assert.equal(updated.created_at, record.created_at);
  assert.equal(a!.authenticate(key)?.name, 'after');

  const fromB = await b!.get(record.id);
  assert.equal(fromB.name, 'after');
  await eventually(() => b!.authenticate(key)?.rate_limit_per_minute === 5, 2000);

  const cleared = await b!.update(record.id, {
    rate_limit_per_minute: null,
    tier: 'professional',
    ip_allowlist: [],
  });
  assert.equal(cleared.rate_limit_per_minute, null);
  assert.equal(cleared.tier, 'professional');
  assert.deepEqual(cleared.ip_allowlist, []);
});

test('concurrent updates on two replicas both land (optimistic concurrency retries)', async () => {
  const [a, b] = await openStores(2);
  const { record } = await a!.create({ name: 'race', tier: 'basic' });
  await Promise.all([
    a!.update(record.id, { name: 'renamed' }),
    b!.update(record.id, { rate_limit_per_minute: 7 }),
  ]);
  const final = await a!.get(record.id);
  assert.equal(final.name, 'renamed');
  assert.equal(final.rate_limit_per_minute, 7);
});

test('validation errors carry param; unknown ids are not_found', async () => {
  const [store] = await openStores(1);
  const param = async (p: Promise<unknown>): Promise<string | undefined> => {
    try {
      await p;
    } catch (error) {
      assert.ok(error instanceof SwitchboardError);
      assert.equal(error.code, 'invalid_request');
      return error.param;
    }
    assert.fail('expected a validation error');
  };
  assert.equal(await param(store!.create({ name: '', tier: 'basic' })), 'name');
  assert.equal(await param(store!.create({ name: 'x', tier: 'platinum' as never })), 'tier');
  assert.equal(
    await param(store!.create({ name: 'x', tier: 'basic', ip_allowlist: ['10.0.0.1/40'] })),
    'ip_allowlist',
  );
  assert.equal(
    await param(store!.create({ name: 'x', tier: 'basic', rate_limit_per_minute: 0 })),
    'rate_limit_per_minute',
  );
  const { record } = await store!.create({ name: 'x', tier: 'basic' });
  assert.equal(await param(store!.update(record.id, { tier: 'nope' as never })), 'tier');

  const isNotFound = (e: unknown): boolean => e instanceof SwitchboardError && e.code === 'not_found';
  await assert.rejects(store!.get('aaaaaaaaaaaa'), isNotFound);
  await assert.rejects(store!.update('aaaaaaaaaaaa', { name: 'y' }), isNotFound);
  await assert.rejects(store!.rotate('aaaaaaaaaaaa', 0), isNotFound);
  await assert.rejects(store!.revoke('not.a.valid>id'), isNotFound);
});

test('a replica opened later loads existing keys before ready', async () => {
  const [a] = await openStores(1);
  const { key } = await a!.create({ name: 'early', tier: 'basic' });
  const bucket = `keys_test_${bucketCount}`;
  const late = await KeyStore.open(await newConnection(), { bucket, pepper });
  stores.push(late);
  await late.ready;
  assert.equal(late.isReady, true);
  assert.ok(late.authenticate(key));
  assert.equal((await late.list()).length, 1);
});

test('last_used_at appears after a flush, on every replica', async () => {
  const [a, b] = await openStores(2, { usageFlushIntervalMs: 200 });
  const { record } = await a!.create({ name: 'used', tier: 'basic' });
  assert.equal((await a!.list())[0]?.last_used_at, null);
  const before = Date.now();
  a!.touch(record.id);
  let seen: string | null = null;
  const deadline = Date.now() + 2000;
  while (seen === null && Date.now() < deadline) {
    seen = (await b!.list()).find((k) => k.id === record.id)?.last_used_at ?? null;
    if (seen === null) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(seen !== null, 'the other replica sees last_used_at');
  assert.ok(Date.parse(seen) >= before - 1 && Date.parse(seen) <= Date.now());
});

test('close() flushes pending last-used times', async () => {
  const bucket = `keys_test_${++bucketCount}`;
  const a = await KeyStore.open(await newConnection(), { bucket, pepper, usageFlushIntervalMs: 60_000 });
  await a.ready;
  const { record } = await a.create({ name: 'flush-on-close', tier: 'basic' });
  a.touch(record.id);
  await a.close();
  const b = await KeyStore.open(await newConnection(), { bucket, pepper });
  stores.push(b);
  await b.ready;
  assert.ok((await b.list())[0]?.last_used_at);
});
