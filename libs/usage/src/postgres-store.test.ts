import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startPostgres, type PostgresHandle } from '@switchboard/devcluster';
import { openUsageStore, type PostgresUsageStore } from './postgres-store.js';
import type { UsageRecord } from './meters.js';
import type { UsageStore } from './store.js';

type Store = UsageStore & PostgresUsageStore;

const at = (iso: string) => new Date(iso);
const record = (id: string, overrides: Partial<UsageRecord> = {}): UsageRecord => ({
  id,
  key_id: 'key-a',
  capability: 'diffusion',
  model: 'tiny-sd',
  at: new Date(),
  values: { images: 1, megapixel_steps: 0.5 },
  ...overrides,
});

describe('the PostgreSQL usage store', { timeout: 120_000 }, () => {
  let postgres: PostgresHandle;
  let url: string;
  const open: Store[] = [];
  /** A store of its own: a gateway replica with a pool of its own. */
  const replica = async (): Promise<Store> => {
    const store = await openUsageStore({ url });
    open.push(store);
    return store;
  };

  before(async () => {
    postgres = await startPostgres();
    url = postgres.url;
  });
  after(async () => {
    await Promise.all(open.map((store) => store.close()));
    await postgres.stop();
  });

  test('a record id counts once, even sent by two replicas at the same moment', async () => {
    url = await postgres.createDatabase();
    const [a, b] = await Promise.all([replica(), replica()]);
    const copies = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).record(record('call:1'))),
    );
    assert.equal(copies.filter((c) => c.recorded).length, 1);
    const report = await a.query({
      keyIds: ['key-a'],
      start: at('2020-01-01T00:00:00Z'),
      end: new Date(Date.now() + 86_400_000),
      bucket: 'day',
      groupBy: ['capability', 'model', 'meter'],
    });
    const results = report.data.flatMap((bucket) => bucket.results);
    assert.deepEqual(results, [
      { capability: 'diffusion', model: 'tiny-sd', meter: 'images', value: 1 },
      { capability: 'diffusion', model: 'tiny-sd', meter: 'megapixel_steps', value: 0.5 },
    ]);
  });

  test('buckets have UTC edges, empty ones are kept, and grouping follows group_by', async () => {
    url = await postgres.createDatabase();
    const store = await replica();
    await store.record(record('r1', { at: at('2026-03-01T23:59:59.999Z'), values: { images: 2 } }));
    await store.record(record('r2', { at: at('2026-03-02T00:00:00.000Z'), values: { images: 3 } }));
    await store.record(
      record('r3', {
        key_id: 'key-b',
        at: at('2026-03-02T05:00:00Z'),
        values: { images: 4 },
        model: 'other',
      }),
    );
    await store.record(
      record('r4', {
        capability: 'llm',
        model: null,
        at: at('2026-03-02T06:00:00Z'),
        values: { requests: 1 },
      }),
    );
    const days = await store.query({
      keyIds: ['key-a'],
      start: at('2026-02-28T00:00:00Z'),
      end: at('2026-03-04T00:00:00Z'),
      bucket: 'day',
      groupBy: ['meter'],
    });
    assert.deepEqual(
      days.data.map((b) => [b.start, b.results.map((r) => `${r.meter}=${r.value}`)]),
      [
        ['2026-02-28T00:00:00.000Z', []],
        ['2026-03-01T00:00:00.000Z', ['images=2']],
        ['2026-03-02T00:00:00.000Z', ['images=3', 'requests=1']],
        ['2026-03-03T00:00:00.000Z', []],
      ],
    );
    assert.equal(days.data[1]!.end, '2026-03-02T00:00:00.000Z');
    const hours = await store.query({
      keyIds: null,
      start: at('2026-03-01T23:00:00Z'),
      end: at('2026-03-02T06:00:00Z'),
      bucket: 'hour',
      groupBy: ['key_id', 'model', 'meter'],
    });
    assert.equal(hours.data.length, 7);
    assert.deepEqual(hours.data[0]!.results, [
      { key_id: 'key-a', capability: null, model: 'tiny-sd', meter: 'images', value: 2 },
    ]);
    assert.deepEqual(hours.data[6]!.results, [
      { key_id: 'key-b', capability: null, model: 'other', meter: 'images', value: 4 },
    ]);
    assert.deepEqual(
      hours.data.slice(2, 6).map((b) => b.results),
      [[], [], [], []],
    );
  });

  test('concurrent admissions on two replicas never together pass a reserved quota', async () => {
    url = await postgres.createDatabase();
    const [a, b] = await Promise.all([replica(), replica()]);
    const quotas = { images: { limit: 7, period: 'day' as const } };
    const expires_at = new Date(Date.now() + 60_000);
    const admissions = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).admit({
          reservation_id: `call:${i}`,
          key_id: 'key-q',
          quotas,
          reserve: { images: 1 },
          check: [],
          expires_at,
        }),
      ),
    );
    const admitted = admissions.flatMap((admission, i) => (admission.admitted ? [i] : []));
    assert.equal(admitted.length, 7);
    const refusals = admissions.filter((admission) => !admission.admitted);
    assert.ok(refusals.every((r) => r.meter === 'images' && r.retry_after_seconds > 0));
    assert.equal(refusals.filter((r) => r.notice?.kind === 'exceeded').length, 1, 'one exceeded notice');
    assert.deepEqual(await a.used('key-q', 'images', 'day'), { settled: 0, reserved: 7 });

    // Two fail and give their place back; the others settle to what they really made.
    await a.release(`call:${admitted[0]}`);
    await b.release(`call:${admitted[0]}`); // again: nothing happens
    await a.release(`call:${admitted[1]}`);
    const settled = await Promise.all(
      admitted
        .slice(2)
        .map((i) =>
          b.record(record(`call:${i}`, { key_id: 'key-q', values: { images: 1 } }), quotas, `call:${i}`),
        ),
    );
    assert.deepEqual(await b.used('key-q', 'images', 'day'), { settled: 5, reserved: 0 });
    assert.deepEqual(
      settled.flatMap((s) => s.notices),
      [],
      '5 of 7 is under 80 %',
    );

    const more = await a.admit({
      reservation_id: 'call:again',
      key_id: 'key-q',
      quotas,
      reserve: { images: 2 },
      check: [],
      expires_at,
    });
    assert.equal(more.admitted, true, '5 + 2 fits 7');
    const crossing = await a.record(
      record('call:again', { key_id: 'key-q', values: { images: 2 } }),
      quotas,
      'call:again',
    );
    assert.deepEqual(
      crossing.notices.map((n) => [n.kind, n.meter, n.used, n.limit]),
      [['warning', 'images', 7, 7]],
    );
    const over = await a.admit({
      reservation_id: 'call:over',
      key_id: 'key-q',
      quotas,
      reserve: { images: 1 },
      check: [],
      expires_at,
    });
    assert.equal(over.admitted, false);
  });

  const EXPIRES_SOON_MS = 2_000;

  test('a meter known only afterwards refuses once spent; expired reservations stop counting', async () => {
    url = await postgres.createDatabase();
    const store = await replica();
    const quotas = {
      requests: { limit: 2, period: 'month' as const },
      output_tokens: { limit: 10, period: 'day' as const },
    };
    const admit = (id: string, reserve = {}, expires = 60_000) =>
      store.admit({
        reservation_id: id,
        key_id: 'key-r',
        quotas,
        reserve,
        check: ['requests'],
        expires_at: new Date(Date.now() + expires),
      });
    assert.equal((await admit('c1')).admitted, true);
    await store.record(
      record('c1', { key_id: 'key-r', capability: 'llm', values: { requests: 1 } }),
      quotas,
      'c1',
    );
    assert.equal((await admit('c2')).admitted, true);
    await store.record(
      record('c2', { key_id: 'key-r', capability: 'llm', values: { requests: 1 } }),
      quotas,
      'c2',
    );
    const refused = await admit('c3');
    assert.equal(refused.admitted, false);
    assert.equal(!refused.admitted && refused.meter, 'requests');

    assert.equal(
      (
        await store.admit({
          reservation_id: 'e1',
          key_id: 'key-e',
          quotas,
          reserve: { output_tokens: 10 },
          check: [],
          // Long enough to outlast the next admission on a loaded machine; waited out below.
          expires_at: new Date(Date.now() + EXPIRES_SOON_MS),
        })
      ).admitted,
      true,
    );
    const blocked = await store.admit({
      reservation_id: 'e2',
      key_id: 'key-e',
      quotas,
      reserve: { output_tokens: 1 },
      check: [],
      expires_at: new Date(Date.now() + 60_000),
    });
    assert.equal(blocked.admitted, false, 'held by the first reservation');
    await new Promise((resolve) => setTimeout(resolve, EXPIRES_SOON_MS + 100));
    const later = await store.admit({
      reservation_id: 'e3',
      key_id: 'key-e',
      quotas,
      reserve: { output_tokens: 10 },
      check: [],
      expires_at: new Date(Date.now() + 60_000),
    });
    assert.equal(
      later.admitted,
      true,
      'an expired reservation (a gateway that died mid-call) no longer holds',
    );
  });

  test('what is recorded survives a killed server, and the pool reconnects', async () => {
    url = await postgres.createDatabase();
    const store = await replica();
    await store.recordMany([
      record('k1', { key_id: 'key-k' }),
      record('k2', { key_id: 'key-k' }),
      record('k1', { key_id: 'key-k' }),
    ]);
    await postgres.kill();
    await assert.rejects(store.record(record('k3', { key_id: 'key-k' })));
    assert.equal(store.healthy, false);
    await postgres.restart();
    let settled = false;
    for (let i = 0; i < 50 && !settled; i++) {
      settled = await store.record(record('k3', { key_id: 'key-k' })).then(
        () => true,
        () => new Promise((resolve) => setTimeout(() => resolve(false), 100)),
      );
    }
    assert.ok(settled, 'records again after the restart');
    assert.deepEqual(await store.used('key-k', 'images', 'day'), { settled: 3, reserved: 0 });
    assert.equal(store.healthy, true);
  });
});
