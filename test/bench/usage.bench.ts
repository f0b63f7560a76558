// npm run bench:usage — usage queries over a realistic history: 1,000 keys × 90 days of records
// loaded through the store's own write path (the same statement a gateway runs, so the rollups
// are what production writes), into a PostgreSQL of its own with fsync on. Then each view the API
// and the dashboard ask for, timed in the store and, for the operator's view, through
// GET /admin/api/usage on a gateway: p50 / p95 / max over BENCH_RUNS runs after a warm-up.
import { startPostgres } from '@switchboard/devcluster';
import { openUsageStore, type Capability, type UsageQuery, type UsageRecord } from '@switchboard/usage';
import { startStack } from '../support/stack.js';
import { percentile } from './stats.js';

const keys = Number(process.env.BENCH_KEYS ?? 1000);
const days = Number(process.env.BENCH_DAYS ?? 90);
const runs = Number(process.env.BENCH_RUNS ?? 30);
/** The every-key views move about a million rows each: fewer runs. */
const heavyRuns = Number(process.env.BENCH_HEAVY_RUNS ?? 10);
const DAY_MS = 86_400_000;

/** A key's day: three llm calls at different hours, one image, one browser session. */
function dayOfWork(key: number, day: number, dayStart: number): UsageRecord[] {
  const keyId = `key${String(key).padStart(4, '0')}`;
  const at = (hour: number) => new Date(dayStart + ((hour + key) % 24) * 3_600_000 + 1_000);
  const base = { key_id: keyId };
  const of = (
    n: number,
    capability: Capability,
    model: string | null,
    hour: number,
    values: UsageRecord['values'],
  ) => ({
    ...base,
    id: `bench:${keyId}:${day}:${n}`,
    capability,
    model,
    at: at(hour),
    values,
  });
  return [
    of(0, 'llm', 'llama-3.2-1b', 9, { requests: 1, input_tokens: 120 + key, output_tokens: 300 }),
    of(1, 'llm', 'llama-3.2-1b', 13, { requests: 1, input_tokens: 80, output_tokens: 150 + day }),
    of(2, 'llm', 'qwen-0.5b', 17, { requests: 1, input_tokens: 40, output_tokens: 90 }),
    of(3, 'diffusion', 'sd-turbo', 11, { images: 1, megapixel_steps: (512 * 512 * 4) / 1e6 }),
    of(4, 'browser', null, 15, { session_seconds: 60 + (key % 300), captures: 2 }),
  ];
}

async function timed(label: string, run: () => Promise<unknown>, times = runs): Promise<void> {
  await run(); // warm-up: plans, caches
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = process.hrtime.bigint();
    await run();
    ms.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  const fmt = (value: number) => value.toFixed(1).padStart(8);
  console.log(
    `${label.padEnd(58)} p50 ${fmt(percentile(ms, 50))} ms  p95 ${fmt(percentile(ms, 95))} ms  max ${fmt(Math.max(...ms))} ms`,
  );
}

const postgres = await startPostgres({ fsync: true });
const store = await openUsageStore({ url: postgres.url });
try {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const first = today - (days - 1) * DAY_MS;
  const loadStarted = Date.now();
  let records = 0;
  for (let day = 0; day < days; day++) {
    const batch: UsageRecord[] = [];
    for (let key = 0; key < keys; key++) batch.push(...dayOfWork(key, day, first + day * DAY_MS));
    records += await store.recordMany(batch);
  }
  const loadSeconds = (Date.now() - loadStarted) / 1000;
  console.log(
    `loaded ${records} records (${keys} keys × ${days} days) in ${loadSeconds.toFixed(1)} s — ${Math.round(records / loadSeconds)} records/s`,
  );

  const ninetyDays = { start: new Date(first), end: new Date(today + DAY_MS) };
  const allKeys: UsageQuery = {
    keyIds: null,
    ...ninetyDays,
    bucket: 'day',
    groupBy: ['key_id', 'capability', 'model', 'meter'],
  };
  await timed(
    `admin: every key, ${days} days daily, by key_id (store)`,
    () => store.query(allKeys),
    heavyRuns,
  );
  await timed(`admin: every key, ${days} days daily, by meter (store)`, () =>
    store.query({ ...allKeys, groupBy: ['meter'] }),
  );
  await timed(`one key, ${days} days daily (store)`, () => store.query({ ...allKeys, keyIds: ['key0042'] }));
  await timed('one key, 7 days hourly (store)', () =>
    store.query({
      keyIds: ['key0042'],
      start: new Date(today - 6 * DAY_MS),
      end: new Date(today + DAY_MS),
      bucket: 'hour',
      groupBy: ['capability', 'model', 'meter'],
    }),
  );

  const stack = await startStack({ env: { USAGE_DATABASE_URL: postgres.url } });
  try {
    const url = new URL('/admin/api/usage', stack.gateway.url);
    url.search = new URLSearchParams({
      start: ninetyDays.start.toISOString(),
      end: ninetyDays.end.toISOString(),
      bucket: 'day',
      group_by: 'key_id,capability,model,meter',
    }).toString();
    let bytes = 0;
    await timed(
      `GET /admin/api/usage: every key, ${days} days, by key_id`,
      async () => {
        const res = await fetch(url, { headers: { authorization: `Bearer ${stack.gateway.adminToken}` } });
        if (res.status !== 200) throw new Error(`GET /admin/api/usage: ${res.status} ${await res.text()}`);
        bytes = (await res.arrayBuffer()).byteLength;
      },
      heavyRuns,
    );
    console.log(`  (response ${(bytes / 1e6).toFixed(1)} MB)`);
  } finally {
    await stack.stop();
  }
} finally {
  await store.close();
  await postgres.stop();
}
