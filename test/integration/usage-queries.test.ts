// GET /usage and GET /admin/api/usage over records of known times, written to the real usage store
// the gateway reads: UTC hour and day bucket edges, empty buckets included, the defaults, the
// limits and bad input (400 naming the parameter); a key sees only its own usage whatever it asks
// for; the operator sees any or all keys, split by key_id; an API key cannot call the admin route.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { UsageRecord, UsageStore } from '@switchboard/usage';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';
import {
  getAdminUsage,
  getUsage,
  openTestUsageStore,
  totals,
  type UsageReportView,
} from '../support/usage.js';

let stack: Stack;
let store: UsageStore;
let a: CreatedKey;
let b: CreatedKey;

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A record of `values` for `key` at `at`, as the gateway would write it after the work. */
const record = (
  key: CreatedKey,
  at: string,
  values: UsageRecord['values'],
  model = 'tiny-sd-dev',
): UsageRecord => ({
  id: `test:${randomUUID()}`,
  key_id: key.id,
  capability: 'diffusion',
  model,
  at: new Date(at),
  values,
});

before(async () => {
  // The stack's database is its own: the admin call across all keys sees only what this file wrote.
  stack = await startStack();
  store = await openTestUsageStore(stack);
  [a, b] = await Promise.all([createKey(stack.gateway), createKey(stack.gateway)]);
  for (const r of [
    // Either side of the hour and the day edges of 1 March 2026 (UTC).
    record(a, '2026-03-01T00:59:59.999Z', { images: 1 }),
    record(a, '2026-03-01T01:00:00.000Z', { images: 2 }),
    record(a, '2026-03-01T23:59:59.999Z', { images: 4 }),
    record(a, '2026-03-02T00:00:00.000Z', { images: 8, megapixel_steps: 0.5 }, 'other-model'),
    record(b, '2026-03-01T00:30:00.000Z', { images: 100 }),
    record(b, '2026-03-02T12:00:00.000Z', { images: 200 }),
  ]) {
    assert.equal((await store.record(r)).recorded, true);
  }
});
after(async () => {
  await store?.close();
  await stack?.stop();
});

async function report(res: Response): Promise<UsageReportView> {
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as UsageReportView;
}

/** Each bucket as [start, end, {meter or key_id/meter: value}], times as epoch ms. */
function buckets(view: UsageReportView): [number, number, Record<string, number>][] {
  return view.data.map((bucket) => [
    Date.parse(bucket.start),
    Date.parse(bucket.end),
    Object.fromEntries(
      bucket.results.map((r) => [`${r.key_id === undefined ? '' : `${r.key_id}/`}${r.meter}`, r.value]),
    ),
  ]);
}

const at = (iso: string) => Date.parse(iso);

test('hour buckets: UTC edges, a record at the edge in the later bucket, empty buckets included', async () => {
  const view = await report(
    await getUsage(stack.gateway, a.key, {
      start: '2026-03-01T00:00:00Z',
      end: '2026-03-01T03:00:00Z',
      bucket: 'hour',
      group_by: 'meter',
    }),
  );
  assert.equal(view.object, 'usage');
  assert.equal(view.bucket, 'hour');
  assert.deepEqual(buckets(view), [
    [at('2026-03-01T00:00:00Z'), at('2026-03-01T01:00:00Z'), { images: 1 }],
    [at('2026-03-01T01:00:00Z'), at('2026-03-01T02:00:00Z'), { images: 2 }],
    [at('2026-03-01T02:00:00Z'), at('2026-03-01T03:00:00Z'), {}],
  ]);
  for (const bucket of view.data) {
    assert.match(bucket.start, /Z$/, 'UTC, ISO 8601');
    for (const r of bucket.results)
      assert.deepEqual([r.capability, r.model], [null, null], 'not split by them');
  }
});

test('day buckets: UTC days, empty ones included; split by capability, model and meter', async () => {
  const view = await report(
    await getUsage(stack.gateway, a.key, {
      start: '2026-02-28T00:00:00Z',
      end: '2026-03-03T00:00:00Z',
      bucket: 'day',
      group_by: 'capability,model,meter',
    }),
  );
  assert.equal(view.bucket, 'day');
  assert.deepEqual(
    view.data.map((bucket) => [Date.parse(bucket.start), Date.parse(bucket.end)]),
    [0, 1, 2].map((i) => [at('2026-02-28T00:00:00Z') + i * DAY, at('2026-02-28T00:00:00Z') + (i + 1) * DAY]),
  );
  assert.deepEqual(view.data[0]!.results, []);
  assert.deepEqual(view.data[1]!.results, [
    { capability: 'diffusion', model: 'tiny-sd-dev', meter: 'images', value: 7 },
  ]);
  assert.deepEqual(
    [...view.data[2]!.results].sort((x, y) => x.meter.localeCompare(y.meter)),
    [
      { capability: 'diffusion', model: 'other-model', meter: 'images', value: 8 },
      { capability: 'diffusion', model: 'other-model', meter: 'megapixel_steps', value: 0.5 },
    ],
  );
});

test('a start or end inside a bucket widens the range to whole buckets', async () => {
  const view = await report(
    await getUsage(stack.gateway, a.key, {
      start: '2026-03-01T00:30:00Z',
      end: '2026-03-01T01:30:00Z',
      bucket: 'hour',
      group_by: 'meter',
    }),
  );
  assert.deepEqual(buckets(view), [
    [at('2026-03-01T00:00:00Z'), at('2026-03-01T01:00:00Z'), { images: 1 }],
    [at('2026-03-01T01:00:00Z'), at('2026-03-01T02:00:00Z'), { images: 2 }],
  ]);
});

test('defaults: day buckets from 7 days ago to now, every day listed', async () => {
  const before = Date.now();
  const view = await report(await getUsage(stack.gateway, a.key));
  const after = Date.now();
  assert.equal(view.bucket, 'day');
  const floorDay = (ms: number) => Math.floor(ms / DAY) * DAY;
  const first = Date.parse(view.data[0]!.start);
  const last = Date.parse(view.data.at(-1)!.end);
  assert.ok(
    first === floorDay(before - 7 * DAY) || first === floorDay(after - 7 * DAY),
    `first bucket ${view.data[0]!.start}`,
  );
  assert.ok(last >= before && last <= floorDay(after) + DAY, `last bucket ends ${view.data.at(-1)!.end}`);
  for (const [i, bucket] of view.data.entries()) {
    assert.equal(Date.parse(bucket.end) - Date.parse(bucket.start), DAY);
    if (i > 0) assert.equal(bucket.start, view.data[i - 1]!.end, 'contiguous');
    assert.deepEqual(bucket.results, [], 'nothing recorded this week');
  }
  assert.ok(view.data.length >= 7 && view.data.length <= 8, `${view.data.length} days`);
});

test('at most 1,000 buckets: 1,000 hours answer, 1,001 are a 400', async () => {
  const start = at('2026-03-01T00:00:00Z');
  const within = await report(
    await getUsage(stack.gateway, a.key, {
      start: new Date(start).toISOString(),
      end: new Date(start + 1000 * HOUR).toISOString(),
      bucket: 'hour',
    }),
  );
  assert.equal(within.data.length, 1000);
  const tooMany = await getUsage(stack.gateway, a.key, {
    start: new Date(start).toISOString(),
    end: new Date(start + 1001 * HOUR).toISOString(),
    bucket: 'hour',
  });
  assert.equal(tooMany.status, 400);
  const error = await errorOf(tooMany);
  assert.equal(error.code, 'invalid_request');
  assert.ok(['start', 'end', 'bucket'].includes(error.param ?? ''), `param ${error.param}`);
});

test('bad input is a 400 naming the parameter', async () => {
  // An end before the start is the fault of either: both names are fair.
  const cases: [Record<string, string>, string[]][] = [
    [{ start: 'yesterday' }, ['start']],
    [{ start: '2026-03-01T00:00:00Z', end: '2026-13-45' }, ['end']],
    [{ start: '2026-03-02T00:00:00Z', end: '2026-03-01T00:00:00Z' }, ['start', 'end']],
    [{ bucket: 'week' }, ['bucket']],
    [{ group_by: 'colour' }, ['group_by']],
  ];
  for (const [query, params] of cases) {
    const res = await getUsage(stack.gateway, a.key, query);
    assert.equal(res.status, 400, JSON.stringify(query));
    const error = await errorOf(res);
    assert.equal(error.code, 'invalid_request', JSON.stringify(query));
    assert.ok(params.includes(error.param ?? ''), `${JSON.stringify(query)}: param ${error.param}`);
  }
});

test("a key sees only its own usage, whatever it asks for; another key's id gets it nothing", async () => {
  const window = { start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:00Z', bucket: 'day' };
  const own = totals(await report(await getUsage(stack.gateway, b.key, { ...window, group_by: 'meter' })));
  assert.deepEqual(own, { 'null/null/images': 300 });
  const ofA = totals(await report(await getUsage(stack.gateway, a.key, { ...window, group_by: 'meter' })));
  assert.deepEqual(ofA, { 'null/null/images': 15, 'null/null/megapixel_steps': 0.5 });

  // The attack: B names A's key id, or asks to be split by key id. Either refused, or B's own.
  for (const query of [
    { ...window, group_by: 'meter', key_id: a.id },
    { ...window, group_by: 'key_id,meter' },
    { ...window, group_by: 'meter', key_id: a.id, keyId: a.id, 'key_id[]': a.id },
  ]) {
    const res = await getUsage(stack.gateway, b.key, query);
    if (res.status === 200) {
      const seen = await report(res);
      for (const bucket of seen.data) {
        for (const r of bucket.results)
          assert.ok(r.key_id === undefined || r.key_id === b.id, JSON.stringify(r));
      }
      const values = Object.values(totals(seen));
      assert.deepEqual(values, [300], `B's own images only: ${JSON.stringify(totals(seen))}`);
    } else {
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.equal((await errorOf(res)).code, 'invalid_request');
    }
  }
  assert.equal((await getUsage(stack.gateway, 'sb_nosuchkey_secretsecretsecretsecret')).status, 401);
});

test('the admin call: all keys split by key_id, one key with key_id; never with an API key', async () => {
  const window = { start: '2026-03-01T00:00:00Z', end: '2026-03-03T00:00:00Z', bucket: 'day' };
  const all = totals(
    await report(await getAdminUsage(stack.gateway, { ...window, group_by: 'key_id,meter' })),
  );
  assert.deepEqual(all, {
    [`${a.id}/null/null/images`]: 15,
    [`${a.id}/null/null/megapixel_steps`]: 0.5,
    [`${b.id}/null/null/images`]: 300,
  });
  const byDay = buckets(
    await report(await getAdminUsage(stack.gateway, { ...window, group_by: 'key_id,meter' })),
  );
  assert.deepEqual(byDay, [
    [
      at('2026-03-01T00:00:00Z'),
      at('2026-03-02T00:00:00Z'),
      { [`${a.id}/images`]: 7, [`${b.id}/images`]: 100 },
    ],
    [
      at('2026-03-02T00:00:00Z'),
      at('2026-03-03T00:00:00Z'),
      { [`${a.id}/images`]: 8, [`${a.id}/megapixel_steps`]: 0.5, [`${b.id}/images`]: 200 },
    ],
  ]);
  // Not split by key: every key's usage summed.
  assert.deepEqual(
    totals(await report(await getAdminUsage(stack.gateway, { ...window, group_by: 'meter' }))),
    {
      'null/null/images': 315,
      'null/null/megapixel_steps': 0.5,
    },
  );
  const onlyB = totals(
    await report(await getAdminUsage(stack.gateway, { ...window, group_by: 'key_id,meter', key_id: b.id })),
  );
  assert.deepEqual(onlyB, { [`${b.id}/null/null/images`]: 300 });

  const withKey = await fetch(
    `${stack.gateway.url}/admin/api/usage?${new URLSearchParams(window).toString()}`,
    {
      headers: bearer(a.key),
    },
  );
  assert.equal(withKey.status, 401);
  assert.equal((await errorOf(withKey)).code, 'unauthorized');
  assert.equal((await fetch(`${stack.gateway.url}/admin/api/usage`)).status, 401);
});
