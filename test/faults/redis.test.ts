// Redis going away under load: restarted (it keeps no data) and stopped, then started again.
// Rate limiting fails open as docs/gateway.md says (each replica limits on its own, /readyz stays
// 200 "degraded", switchboard_rate_limit_store_degraded is 1), model calls at once are counted
// per replica, nothing answers 5xx, and once Redis is back the replicas share their counts again
// without any process of ours being restarted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, type CreatedKey } from '../support/admin.js';
import { startFaultCluster, type FaultCluster, type FaultGateway } from '../support/fault-cluster.js';
import { errorOf, sleep, until } from '../support/stack.js';

let cluster: FaultCluster;

before(async () => {
  cluster = await startFaultCluster({ workers: ['llm'] });
});

after(async () => {
  cluster?.redis.resume();
  await cluster?.stop();
});

const short = { prompt: 'hello', max_tokens: 4, temperature: 0 };
/** Long enough to still run while the other calls of its batch arrive, even on a busy machine. */
const long = { prompt: 'Tell me a story', max_tokens: 300, temperature: 0 };

/** A completion; a generous bound, since other test files share the cores, tells a hang from a slow call. */
const query = (gateway: FaultGateway, key: CreatedKey, body: unknown) =>
  fetch(`${gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(180_000),
  });

const readiness = async (gateway: FaultGateway) =>
  (await (await fetch(`${gateway.url}/readyz`)).json()) as { status: string };

const degradedGauge = async (gateway: FaultGateway): Promise<number | undefined> => {
  const text = await (await fetch(gateway.metricsUrl)).text();
  const value = /^switchboard_rate_limit_store_degraded(?:\{[^}]*\})? (\d)$/m.exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
};

/** Completions and model lists on both gateways, one call at a time, until stopped: every status seen. */
function loadOnBothGateways(key: CreatedKey) {
  const statuses: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let turn = 0; running; turn++) {
      const gateway = cluster.gateways[turn % 2]!;
      const res = await (
        turn % 3 === 0
          ? fetch(`${gateway.url}/models`, { headers: bearer(key.key), signal: AbortSignal.timeout(20_000) })
          : query(gateway, key, short)
      ).catch(() => undefined);
      statuses.push(res?.status ?? 0);
      await res?.arrayBuffer();
      await sleep(100);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return statuses;
  };
}

async function assertRateLimited(res: Response) {
  assert.equal(res.status, 429, await res.clone().text());
  assert.equal((await errorOf(res)).code, 'rate_limited');
  assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
}

/** Once Redis is back: ready (not degraded) and the gauge 0 on both, and one key's limit is shared again. */
async function assertRecovered() {
  const probe = await cluster.createKey({ rate_limit_per_minute: 100_000 });
  for (const gateway of cluster.gateways) {
    await until(async () => {
      await query(gateway, probe, short); // the limiter notices Redis on its next call
      return (await readiness(gateway)).status === 'ready' && (await degradedGauge(gateway)) === 0;
    }, `${gateway.name} uses Redis again`);
  }
  const limited = await cluster.createKey({ rate_limit_per_minute: 4 });
  const answers: Response[] = [];
  for (let i = 0; i < 6; i++) answers.push(await query(cluster.gateways[i % 2]!, limited, short));
  assert.deepEqual(
    answers.map((res) => res.status),
    [200, 200, 200, 200, 429, 429],
    'both replicas share one limit again',
  );
  await assertRateLimited(answers[5]!);
}

test('Redis restarted under load: every call is served, then the replicas share limits again', async () => {
  const stop = loadOnBothGateways(cluster.key);
  await sleep(1000);
  await cluster.redis.restart();
  await sleep(2000);
  const statuses = await stop();
  assert.ok(statuses.length > 5, 'the load ran');
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
    'rate limiting fails open: no call is refused or fails',
  );
  await assertRecovered();
});

test('Redis stopped: per-replica limits, degraded but ready, model calls counted per replica; back once started', async () => {
  const stopLoad = loadOnBothGateways(cluster.key);
  await sleep(1000);
  await cluster.redis.process.stop();
  try {
    for (const gateway of cluster.gateways) {
      await until(
        async () => (await degradedGauge(gateway)) === 1,
        `${gateway.name} reports the store degraded`,
      );
      const ready = await fetch(`${gateway.url}/readyz`);
      assert.equal(ready.status, 200, 'a Redis outage never makes a replica unready');
      assert.equal(((await ready.json()) as { status: string }).status, 'degraded');
    }

    // Each replica admits the key's limit on its own.
    const limited = await cluster.createKey({ rate_limit_per_minute: 3 });
    for (const gateway of cluster.gateways) {
      for (let i = 0; i < 3; i++) assert.equal((await query(gateway, limited, short)).status, 200);
      await assertRateLimited(await query(gateway, limited, short));
    }

    // A basic key's two model calls at once are counted by each replica alone.
    const basic = await cluster.createKey({ tier: 'basic', rate_limit_per_minute: 10_000 });
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => query(cluster.gateways[i % 2]!, basic, long)),
    );
    const refused = answers.filter((res) => res.status !== 200);
    assert.equal(answers.length - refused.length, 4, 'two calls at once on each replica');
    for (const res of refused) {
      assert.equal(res.status, 429, await res.clone().text());
      assert.equal((await errorOf(res)).code, 'concurrency_limit');
      assert.match(res.headers.get('retry-after') ?? '', /^\d+$/);
    }
  } finally {
    await cluster.redis.restart();
  }
  const statuses = await stopLoad();
  assert.deepEqual(
    statuses.filter((s) => s !== 200),
    [],
    'no call of the load failed while Redis was away',
  );
  await assertRecovered();
});
