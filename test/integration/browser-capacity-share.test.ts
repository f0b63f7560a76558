// One key cannot take every browser of the cluster: while another key is being turned away for
// lack of capacity, a key that holds its share (BROWSER_KEY_CAPACITY_SHARE of the live workers'
// capacity, default half) gets no more sessions, on whichever gateway replica it asks. Two real
// browser workers (real Chromium) of two sessions each, two gateway replicas sharing NATS.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Schema } from '@switchboard/client';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { errorOf, sleep } from '../support/stack.js';

/** The `browser` part of GET /admin/api/status, as the gateway documents it. */
type BrowserStatus = Schema<'ClusterStatus'>['browser'];

async function browserStatus(gateway: GatewayProcess): Promise<BrowserStatus> {
  const res = await admin(gateway, 'GET', '/status');
  assert.equal(res.status, 200);
  return ((await res.json()) as { browser: BrowserStatus }).browser;
}

async function waitForStatus(
  gateway: GatewayProcess,
  what: string,
  check: (status: BrowserStatus) => boolean,
): Promise<BrowserStatus> {
  const started = Date.now();
  for (;;) {
    const status = await browserStatus(gateway);
    if (check(status)) return status;
    if (Date.now() - started > 15_000)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(status)}`);
    await sleep(100);
  }
}

describe('browser capacity shared between keys', { timeout: 240_000 }, () => {
  let stack: BrowserStack;
  let second: GatewayProcess;
  let a: CreatedKey;
  let b: CreatedKey;
  let c: CreatedKey;

  before(async () => {
    stack = await startBrowserStack({
      workers: 2,
      workerEnv: { BROWSER_MAX_SESSIONS: '2', BROWSER_POOL_SIZE: '1' },
    });
    [a, b, c] = await Promise.all([
      createKey(stack.gateway, { tier: 'enterprise' }),
      createKey(stack.gateway, { tier: 'basic' }),
      createKey(stack.gateway, { tier: 'professional' }),
    ]);
    // A second replica on the same NATS and Redis: it knows the keys from its first read.
    second = await startGateway({
      ...stack.nats.env('gateway'),
      ...stack.redis.env('gateway'),
      BROWSER_ADDR: stack.workers[0]!.address,
      ...stack.s3.env('switchboard-test'),
    });
  });

  after(async () => {
    await second?.stop();
    await stack?.stop();
  });

  const create = (gateway: GatewayProcess, key: CreatedKey) =>
    fetch(`${gateway.url}/api/browser/session/create`, {
      method: 'POST',
      headers: { ...bearer(key.key), 'content-type': 'application/json' },
      body: '{}',
    });
  const created = async (gateway: GatewayProcess, key: CreatedKey): Promise<string> => {
    const res = await create(gateway, key);
    assert.equal(res.status, 201, await res.clone().text());
    return ((await res.json()) as { session_id: string }).session_id;
  };
  const close = async (gateway: GatewayProcess, key: CreatedKey, id: string) => {
    const res = await fetch(`${gateway.url}/api/browser/session/${id}/close`, {
      method: 'POST',
      headers: bearer(key.key),
    });
    assert.equal(res.status, 200, await res.clone().text());
  };
  const refusedForCapacity = async (res: Response) => {
    assert.equal(res.status, 503, await res.clone().text());
    assert.equal((await errorOf(res)).code, 'no_capacity');
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
  };

  it('keeps the last free browser for the key being turned away, on every replica', async () => {
    const first = stack.gateway;
    const ready = await waitForStatus(first, 'both workers', (s) => s.capacity === 4);
    assert.equal(ready.key_capacity_share, 0.5);
    assert.equal(ready.fair_share, 2);

    // Nobody is waiting: the enterprise key may go past its share (its tier allows 50).
    const aSessions = [await created(first, a), await created(first, a), await created(second, a)];
    await close(first, a, aSessions.pop()!);

    // The basic key takes the other two: the cluster is full.
    const bSessions = [await created(second, b), await created(second, b)];
    await waitForStatus(second, 'a full cluster', (s) => s.in_use === 4);

    // A third key is refused: no browser is free anywhere.
    await refusedForCapacity(await create(first, c));
    const contended = await waitForStatus(second, 'the waiting key on the other replica', (s) =>
      s.waiting_keys.includes(c.id),
    );
    assert.deepEqual(contended.sessions_by_key, { [a.id]: 2, [b.id]: 2 });
    assert.equal(contended.in_use, 4);

    // One browser comes free. The enterprise key holds its share (2 of 4) while the third key
    // waits: it may not take it, through either replica.
    await close(second, b, bSessions.pop()!);
    await waitForStatus(first, 'a free browser', (s) => s.in_use === 3);
    await waitForStatus(second, 'a free browser', (s) => s.in_use === 3);
    const held = await create(second, a);
    await refusedForCapacity(held.clone());
    assert.match((await errorOf(held)).message, /holds 2 of the cluster's 4/);
    await refusedForCapacity(await create(first, a));

    // The waiting key gets it, and is no longer waiting.
    const cSession = await created(second, c);
    const shared = await waitForStatus(
      first,
      'every session counted',
      (s) => s.in_use === 4 && s.waiting_keys.length === 0,
    );
    assert.deepEqual(shared.sessions_by_key, { [a.id]: 2, [b.id]: 1, [c.id]: 1 });

    // With nobody waiting, a browser that comes free may go to the key above its share again.
    await close(first, b, bSessions.pop()!);
    await waitForStatus(second, 'a free browser', (s) => s.in_use === 3);
    aSessions.push(await created(second, a));
    const after = await waitForStatus(first, 'the last session counted', (s) => s.in_use === 4);
    assert.deepEqual(after.sessions_by_key, { [a.id]: 3, [c.id]: 1 });

    for (const id of aSessions) await close(first, a, id);
    await close(first, c, cSession);
  });

  it('takes the share from BROWSER_KEY_CAPACITY_SHARE', async () => {
    const third = await startGateway({
      ...stack.nats.env('gateway'),
      ...stack.redis.env('gateway'),
      BROWSER_ADDR: stack.workers[0]!.address,
      ...stack.s3.env('switchboard-test'),
      BROWSER_KEY_CAPACITY_SHARE: '0.75',
    });
    try {
      const status = await waitForStatus(third, 'both workers', (s) => s.capacity === 4);
      assert.equal(status.key_capacity_share, 0.75);
      assert.equal(status.fair_share, 3);
    } finally {
      await third.stop();
    }
  });
});
