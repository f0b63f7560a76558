import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startPostgres, type PostgresHandle } from '@switchboard/devcluster';
import { newEventId } from './ids.js';
import { SecretBox } from './secrets.js';
import { WebhookStore } from './store.js';
import type { AttemptOutcome, StoredEvent, WebhookStoreOptions } from './types.js';

const box = new SecretBox('a webhook secrets key of at least 32 characters');

const event = (keyId: string, type: string, overrides: Partial<StoredEvent> = {}): StoredEvent => ({
  id: newEventId(),
  key_id: keyId,
  type,
  occurred_at: new Date().toISOString(),
  data: { job_id: 'job-1', status: 'succeeded' },
  ...overrides,
});

const failure = (overrides: Partial<AttemptOutcome> = {}): AttemptOutcome => ({
  ok: false,
  responseStatus: 500,
  responseMs: 12,
  error: 'HTTP 500',
  responseBody: 'oops',
  nextAttemptAt: new Date(Date.now() + 60_000),
  gone: false,
  ...overrides,
});

const success: AttemptOutcome = {
  ok: true,
  responseStatus: 200,
  responseMs: 5,
  error: null,
  responseBody: 'ok',
  nextAttemptAt: null,
  gone: false,
};

const claimAll = { limit: 100, perEndpoint: 100, perKey: 1000, leaseMs: 30_000 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the PostgreSQL webhook store', { timeout: 120_000 }, () => {
  let postgres: PostgresHandle;
  let url: string;
  const open: WebhookStore[] = [];
  /** A store of its own: a gateway or sender replica with its own pool. */
  const replica = async (options: Partial<WebhookStoreOptions> = {}): Promise<WebhookStore> => {
    const store = await WebhookStore.open({ connectionString: url, secretBox: box, ...options });
    open.push(store);
    return store;
  };
  const fresh = async (options: Partial<WebhookStoreOptions> = {}) => {
    url = await postgres.createDatabase();
    return replica(options);
  };
  const endpoint = async (store: WebhookStore, keyId: string, events = ['*']) => {
    const created = await store.createEndpoint(keyId, {
      url: 'https://example.com/hook',
      events,
      description: null,
    });
    assert.notEqual(created, 'limit');
    return created as Exclude<typeof created, 'limit'>;
  };

  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await Promise.all(open.map((store) => store.close()));
    await postgres.stop();
  });

  test('endpoints are scoped by key: another key’s id behaves as absent', async () => {
    const store = await fresh();
    assert.ok(store.healthy());
    const { endpoint: created, secret } = await endpoint(store, 'key-a', ['animate.job.*']);
    assert.match(created.id, /^wh_/);
    assert.match(secret, /^whsec_/);
    assert.equal(created.status, 'enabled');
    assert.deepEqual(created.events, ['animate.job.*']);
    assert.deepEqual(await store.getEndpoint('key-a', created.id), created);
    assert.deepEqual(await store.listEndpoints('key-a'), [created]);

    assert.equal(await store.getEndpoint('key-b', created.id), null);
    assert.deepEqual(await store.listEndpoints('key-b'), []);
    assert.equal(await store.updateEndpoint('key-b', created.id, { url: 'https://evil.example/' }), null);
    assert.equal(await store.rotateSecret('key-b', created.id, 0), null);
    assert.equal(await store.enqueueTest('key-b', created.id), null);
    assert.equal(await store.listDeliveries('key-b', created.id), null);
    assert.equal(await store.deleteEndpoint('key-b', created.id), false);

    const updated = await store.updateEndpoint('key-a', created.id, {
      url: 'https://example.org/new',
      events: ['*'],
      description: 'mine',
      status: 'disabled',
    });
    assert.equal(updated?.url, 'https://example.org/new');
    assert.equal(updated?.description, 'mine');
    assert.equal(updated?.status, 'disabled');
    assert.equal(updated?.disabled_reason, 'owner');
    const enabled = await store.updateEndpoint('key-a', created.id, { status: 'enabled' });
    assert.equal(enabled?.status, 'enabled');
    assert.equal(enabled?.disabled_reason, null);

    assert.equal(await store.deleteEndpoint('key-a', created.id), true);
    assert.equal(await store.getEndpoint('key-a', created.id), null);
    assert.equal(await store.deleteEndpoint('key-a', created.id), false);
  });

  test('21 concurrent registrations on two replicas make exactly 20 endpoints', async () => {
    const a = await fresh();
    const b = await replica();
    const results = await Promise.all(
      Array.from({ length: 21 }, (_, i) =>
        (i % 2 ? a : b).createEndpoint('key-a', {
          url: `https://example.com/${i}`,
          events: ['*'],
          description: null,
        }),
      ),
    );
    assert.equal(results.filter((r) => r === 'limit').length, 1);
    assert.equal((await a.listEndpoints('key-a')).length, 20);
    // The limit is per key.
    await endpoint(a, 'key-b');
  });

  test('secrets are stored sealed: the raw secret is nowhere in the table', async () => {
    const store = await fresh();
    const { endpoint: created, secret } = await endpoint(store, 'key-a');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ dump: string }>(
        `SELECT string_agg(encode(sealed, 'escape') || encode(sealed, 'hex') || encode(sealed, 'base64'), '') AS dump
         FROM webhook_secrets WHERE endpoint_id = $1`,
        [created.id],
      );
      const dump = rows[0]!.dump;
      assert.ok(dump.length > 0);
      assert.ok(!dump.includes(secret.slice(6)));
      assert.ok(!dump.includes(Buffer.from(secret.slice(6), 'base64').toString('hex')));
    } finally {
      await client.end();
    }
    await store.enqueueTest('key-a', created.id);
    const [claimed] = await store.claimDue('sender-1', claimAll);
    assert.deepEqual(claimed?.secrets, [secret]);
  });

  test('rotation: both secrets sign during the grace, only the new one after a grace of 0', async () => {
    const store = await fresh();
    const { endpoint: created, secret: first } = await endpoint(store, 'key-a');
    const rotated = await store.rotateSecret('key-a', created.id, 3_600);
    assert.equal(rotated?.id, created.id);
    assert.notEqual(rotated?.secret, first);
    await store.enqueueTest('key-a', created.id);
    const [during] = await store.claimDue('s', claimAll);
    assert.deepEqual(during?.secrets, [rotated.secret, first]);
    await store.recordAttempt('s', during.id, success);

    const again = await store.rotateSecret('key-a', created.id, 0);
    await store.enqueueTest('key-a', created.id);
    const [afterGrace] = await store.claimDue('s', claimAll);
    assert.deepEqual(afterGrace?.secrets, [again!.secret]);
  });

  test('enqueueEvent: one delivery per matching enabled endpoint of the key, once per event id', async () => {
    const store = await fresh();
    const all = (await endpoint(store, 'key-a')).endpoint;
    const jobs = (await endpoint(store, 'key-a', ['animate.job.*'])).endpoint;
    const sessions = (await endpoint(store, 'key-a', ['browser.session.closed'])).endpoint;
    const disabled = (await endpoint(store, 'key-a')).endpoint;
    await store.updateEndpoint('key-a', disabled.id, { status: 'disabled' });
    const otherKey = (await endpoint(store, 'key-b')).endpoint;

    const succeeded = event('key-a', 'animate.job.succeeded', {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    assert.equal(await store.enqueueEvent(succeeded), 2);
    assert.equal(await store.enqueueEvent(succeeded), 0);
    assert.equal(await store.enqueueEvent(event('key-a', 'browser.session.closed')), 2);
    assert.equal(await store.enqueueEvent(event('key-a', 'keys.created')), 0);
    assert.equal(await store.pendingCount(), 4);

    const claimed = await store.claimDue('s', claimAll);
    assert.equal(claimed.length, 4);
    const byEndpoint = (id: string) => claimed.filter((c) => c.endpoint_id === id).length;
    assert.equal(byEndpoint(all.id), 2);
    assert.equal(byEndpoint(jobs.id), 1);
    assert.equal(byEndpoint(sessions.id), 1);
    assert.equal(byEndpoint(disabled.id) + byEndpoint(otherKey.id), 0);
    const toJobs = claimed.find((c) => c.endpoint_id === jobs.id)!;
    assert.equal(toJobs.event_id, succeeded.id);
    assert.equal(toJobs.traceparent, succeeded.traceparent);
    assert.equal(toJobs.url, 'https://example.com/hook');
    assert.equal(toJobs.attempts, 0);
    assert.equal(toJobs.created_at, succeeded.occurred_at);
    // The exact bytes, in Standard Webhooks' field order.
    assert.equal(
      toJobs.payload,
      JSON.stringify({ type: succeeded.type, timestamp: succeeded.occurred_at, data: succeeded.data }),
    );
  });

  test('claimDue: two concurrent claimers never get the same delivery', async () => {
    const a = await fresh();
    const b = await replica();
    for (let i = 0; i < 5; i++) await endpoint(a, 'key-a');
    for (let i = 0; i < 40; i++) await a.enqueueEvent(event('key-a', 'animate.job.queued'));
    const rounds = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 ? a : b).claimDue(`sender-${i}`, {
          limit: 15,
          perEndpoint: 100,
          perKey: 1000,
          leaseMs: 30_000,
        }),
      ),
    );
    const ids = rounds.flat().map((c) => c.id);
    assert.equal(ids.length, 200);
    assert.equal(new Set(ids).size, 200);
    assert.deepEqual(await a.claimDue('late', claimAll), []);
  });

  test('claimDue: perEndpoint caps in-flight deliveries cluster-wide, and a backlog never blocks another endpoint', async () => {
    const a = await fresh();
    const b = await replica();
    const slow = (await endpoint(a, 'key-a')).endpoint;
    for (let i = 0; i < 50; i++) await a.enqueueEvent(event('key-a', 'animate.job.queued'));
    const fast = (await endpoint(a, 'key-b')).endpoint;
    await a.enqueueEvent(event('key-b', 'animate.job.queued'));

    const options = { limit: 10, perEndpoint: 3, perKey: 1000, leaseMs: 30_000 };
    const [first, second] = await Promise.all([
      a.claimDue('sender-a', options),
      b.claimDue('sender-b', options),
    ]);
    const claimed = [...first, ...second];
    assert.equal(claimed.filter((c) => c.endpoint_id === slow.id).length, 3);
    assert.equal(claimed.filter((c) => c.endpoint_id === fast.id).length, 1);
    assert.deepEqual(await a.claimDue('sender-c', options), []);
    // One finished: one more slot for that endpoint.
    const done =
      first.find((c) => c.endpoint_id === slow.id) ?? second.find((c) => c.endpoint_id === slow.id)!;
    await a.recordAttempt(first.includes(done) ? 'sender-a' : 'sender-b', done.id, success);
    const next = await b.claimDue('sender-c', options);
    assert.equal(next.length, 1);
    assert.equal(next[0]!.endpoint_id, slow.id);
  });

  test('an expired lease is claimable again; the first holder’s late outcome is ignored', async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueTest('key-a', created.id);
    const [first] = await store.claimDue('sender-a', {
      limit: 1,
      perEndpoint: 1,
      perKey: 1000,
      leaseMs: 100,
    });
    assert.ok(first);
    assert.deepEqual(await store.claimDue('sender-b', claimAll), []);
    await sleep(200);
    const [retaken] = await store.claimDue('sender-b', {
      limit: 1,
      perEndpoint: 1,
      perKey: 100,
      leaseMs: 30_000,
    });
    assert.equal(retaken?.id, first.id);

    assert.deepEqual(
      await store.recordAttempt('sender-a', first.id, failure({ gone: true, nextAttemptAt: null })),
      {},
    );
    assert.equal((await store.getEndpoint('key-a', created.id))?.status, 'enabled');
    let page = await store.listDeliveries('key-a', created.id);
    assert.equal(page?.data[0]?.attempts, 0);

    await store.recordAttempt('sender-b', first.id, success);
    page = await store.listDeliveries('key-a', created.id);
    assert.equal(page?.data[0]?.status, 'succeeded');
    assert.equal(page?.data[0]?.attempts, 1);
    assert.equal(page?.data[0]?.type, 'webhook.test');
    // Finished: nothing left to claim, and a second report is ignored.
    assert.deepEqual(await store.recordAttempt('sender-b', first.id, failure()), {});
    assert.deepEqual(await store.claimDue('sender-c', claimAll), []);
  });

  test('claimDue: perKey caps a key across its endpoints, and keys take turns within a claim', async () => {
    const store = await fresh();
    const hoarder = [];
    for (let i = 0; i < 5; i++) hoarder.push((await endpoint(store, 'key-a')).endpoint);
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < hoarder.length; i++) await store.enqueueEvent(event('key-a', 'animate.job.queued'));
    }
    const quiet = (await endpoint(store, 'key-b')).endpoint;
    await store.enqueueEvent(event('key-b', 'animate.job.queued'));

    // The quiet key's one delivery, newest of all, still comes within a claim of two.
    const pair = await store.claimDue('s1', { limit: 2, perEndpoint: 10, perKey: 1000, leaseMs: 30_000 });
    assert.deepEqual(pair.map((c) => c.key_id).sort(), ['key-a', 'key-b']);
    assert.equal(pair.find((c) => c.key_id === 'key-b')?.endpoint_id, quiet.id);

    // key-a already has one in flight: a cap of 6 lets 5 more out, whatever the claim's size.
    const more = await store.claimDue('s2', { limit: 100, perEndpoint: 10, perKey: 6, leaseMs: 30_000 });
    assert.equal(more.length, 5);
    assert.ok(more.every((c) => c.key_id === 'key-a'));
    assert.deepEqual(
      await store.claimDue('s3', { limit: 100, perEndpoint: 10, perKey: 6, leaseMs: 30_000 }),
      [],
    );
  });

  test("a stopping sender's leases are given back: another sender takes them at once", async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueTest('key-a', created.id);
    const [held] = await store.claimDue('stopping', {
      limit: 1,
      perEndpoint: 1,
      perKey: 100,
      leaseMs: 60_000,
    });
    assert.ok(held);
    assert.deepEqual(await store.claimDue('other', claimAll), []);
    assert.equal(await store.releaseLeases('someone-else'), 0);
    assert.equal(await store.releaseLeases('stopping'), 1);
    const [taken] = await store.claimDue('other', claimAll);
    assert.equal(taken?.id, held.id);
    // The stopped sender's late report no longer counts.
    assert.deepEqual(await store.recordAttempt('stopping', held.id, success), {});
    assert.equal((await store.listDeliveries('key-a', created.id))?.data[0]?.status, 'pending');
  });

  test('a failure is retried at nextAttemptAt; with no next attempt the delivery is failed', async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueTest('key-a', created.id);
    const [first] = await store.claimDue('s', claimAll);
    await store.recordAttempt('s', first!.id, failure({ nextAttemptAt: new Date(Date.now() + 300) }));
    let [view] = (await store.listDeliveries('key-a', created.id))!.data;
    assert.equal(view?.status, 'pending');
    assert.equal(view?.response_status, 500);
    assert.ok(view?.next_attempt_at);
    assert.deepEqual(await store.claimDue('s', claimAll), []);
    await sleep(400);
    const [second] = await store.claimDue('s', claimAll);
    assert.equal(second?.id, first!.id);
    assert.equal(second?.attempts, 1);
    await store.recordAttempt(
      's',
      second.id,
      failure({ nextAttemptAt: null, responseStatus: 302, error: 'redirect' }),
    );
    [view] = (await store.listDeliveries('key-a', created.id))!.data;
    assert.equal(view?.status, 'failed');
    assert.equal(view?.attempts, 2);
    assert.equal(view?.response_status, 302);
    assert.equal(view?.error, 'redirect');
    assert.equal(view?.next_attempt_at, null);
  });

  test('410 disables the endpoint at once and tells the key’s other endpoints', async () => {
    const store = await fresh();
    const gone = (await endpoint(store, 'key-a')).endpoint;
    const other = (await endpoint(store, 'key-a', ['usage.quota.*'])).endpoint;
    await store.enqueueEvent(event('key-a', 'browser.session.created'));
    const [claimed] = await store.claimDue('s', claimAll);
    const result = await store.recordAttempt(
      's',
      claimed!.id,
      failure({ responseStatus: 410, gone: true, nextAttemptAt: null }),
    );
    assert.equal(result.disabledEndpoint?.id, gone.id);
    assert.equal(result.disabledEndpoint?.status, 'disabled');
    assert.equal(result.disabledEndpoint?.disabled_reason, 'gone');
    assert.equal((await store.listDeliveries('key-a', gone.id))?.data[0]?.status, 'failed');
    const notices = await store.claimDue('s', claimAll);
    assert.deepEqual(
      notices.map((n) => n.endpoint_id),
      [other.id],
    );
    const body = JSON.parse(notices[0]!.payload) as { type: string; data: { id: string; reason: string } };
    assert.equal(body.type, 'webhook.endpoint.disabled');
    assert.equal(body.data.id, gone.id);
    assert.equal(body.data.reason, 'gone');
  });

  test('failing past disableAfterMs disables the endpoint; the notice goes to the other endpoint only', async () => {
    const store = await fresh({ disableAfterMs: 300 });
    const failing = (await endpoint(store, 'key-a')).endpoint;
    const other = (await endpoint(store, 'key-a', ['animate.job.succeeded'])).endpoint;
    const stranger = (await endpoint(store, 'key-b')).endpoint;
    await store.enqueueEvent(event('key-a', 'browser.session.expired'));
    const [claimed] = await store.claimDue('s', claimAll);
    const soon = () => new Date(Date.now() + 10);
    assert.deepEqual(await store.recordAttempt('s', claimed!.id, failure({ nextAttemptAt: soon() })), {});
    await sleep(350);
    const [again] = await store.claimDue('s', claimAll);
    assert.equal(again?.id, claimed!.id);
    const result = await store.recordAttempt('s', again.id, failure({ nextAttemptAt: soon() }));
    assert.equal(result.disabledEndpoint?.id, failing.id);
    assert.equal(result.disabledEndpoint?.disabled_reason, 'failing');
    await sleep(20);
    const notices = await store.claimDue('s', claimAll);
    assert.deepEqual(
      notices.map((n) => n.endpoint_id),
      [other.id],
    );
    assert.equal((JSON.parse(notices[0]!.payload) as { type: string }).type, 'webhook.endpoint.disabled');
    assert.equal((await store.getEndpoint('key-b', stranger.id))?.status, 'enabled');
  });

  test('a success between failures restarts the failure clock', async () => {
    const store = await fresh({ disableAfterMs: 300 });
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueTest('key-a', created.id);
    const [one] = await store.claimDue('s', claimAll);
    await store.recordAttempt('s', one!.id, failure());
    await sleep(350);
    await store.enqueueTest('key-a', created.id);
    const [two] = await store.claimDue('s', claimAll);
    await store.recordAttempt('s', two!.id, success);
    await store.enqueueTest('key-a', created.id);
    const [three] = await store.claimDue('s', claimAll);
    assert.deepEqual(await store.recordAttempt('s', three!.id, failure()), {});
    assert.equal((await store.getEndpoint('key-a', created.id))?.status, 'enabled');
  });

  test('listDeliveries pages newest first by limit/after, filters by status, and redeliver resends the same event', async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    const events = [];
    for (let i = 0; i < 5; i++) {
      const e = event('key-a', 'animate.job.running');
      events.push(e);
      await store.enqueueEvent(e);
    }
    const claimed = await store.claimDue('s', claimAll);
    await store.recordAttempt('s', claimed[0]!.id, success);
    await store.recordAttempt(
      's',
      claimed[1]!.id,
      failure({ nextAttemptAt: null, responseBody: 'x'.repeat(5_000) }),
    );

    const first = await store.listDeliveries('key-a', created.id, { limit: 2 });
    assert.equal(first?.data.length, 2);
    assert.equal(first?.has_more, true);
    assert.deepEqual(
      first?.data.map((d) => d.event_id),
      [events[4]!.id, events[3]!.id],
    );
    const second = await store.listDeliveries('key-a', created.id, { limit: 2, after: first.data[1]!.id });
    assert.deepEqual(
      second?.data.map((d) => d.event_id),
      [events[2]!.id, events[1]!.id],
    );
    assert.equal(second?.has_more, true);
    const last = await store.listDeliveries('key-a', created.id, { limit: 2, after: second.data[1]!.id });
    assert.deepEqual(
      last?.data.map((d) => d.event_id),
      [events[0]!.id],
    );
    assert.equal(last?.has_more, false);
    const all = await store.listDeliveries('key-a', created.id, { limit: 500 });
    assert.equal(all?.data.length, 5);
    const failed = await store.listDeliveries('key-a', created.id, { status: 'failed' });
    assert.deepEqual(
      failed?.data.map((d) => d.id),
      [claimed[1]!.id],
    );
    assert.equal((await store.listDeliveries('key-a', created.id, { status: 'succeeded' }))?.data.length, 1);

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      'SELECT octet_length(response_body) AS n FROM webhook_attempts WHERE delivery_id = $1',
      [claimed[1]!.id],
    );
    await client.end();
    assert.equal(rows[0]?.n, 1024);

    assert.equal(await store.redeliver('key-b', created.id, claimed[1]!.id), false);
    assert.equal(await store.redeliver('key-a', created.id, 'whd_missing'), false);
    assert.equal(await store.redeliver('key-a', created.id, claimed[1]!.id), true);
    const [again] = await store.claimDue('s', claimAll);
    assert.equal(again?.id, claimed[1]!.id);
    assert.equal(again?.event_id, claimed[1]!.event_id);
    assert.equal(again?.payload, claimed[1]!.payload);
    await store.recordAttempt('s', again.id, success);
    const [view] = (await store.listDeliveries('key-a', created.id, { status: 'succeeded', limit: 1 }))!.data;
    assert.equal(view?.attempts, 2);
  });

  test('deleting an endpoint stops its deliveries', async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueEvent(event('key-a', 'animate.job.queued'));
    assert.equal(await store.deleteEndpoint('key-a', created.id), true);
    assert.deepEqual(await store.claimDue('s', claimAll), []);
    assert.equal(await store.pendingCount(), 0);
  });

  test('prune deletes events, deliveries and attempts older than the cut-off', async () => {
    const store = await fresh();
    const created = (await endpoint(store, 'key-a')).endpoint;
    await store.enqueueEvent(event('key-a', 'animate.job.queued'));
    const [claimed] = await store.claimDue('s', claimAll);
    await store.recordAttempt('s', claimed!.id, success);
    await store.prune(new Date(Date.now() - 60_000));
    assert.equal((await store.listDeliveries('key-a', created.id))?.data.length, 1);
    await store.prune(new Date(Date.now() + 60_000));
    assert.equal((await store.listDeliveries('key-a', created.id))?.data.length, 0);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM webhook_events) + (SELECT count(*) FROM webhook_attempts)
              + (SELECT count(*) FROM webhook_deliveries) AS n`,
    );
    await client.end();
    assert.equal(Number(rows[0]?.n), 0);
    assert.ok(await store.getEndpoint('key-a', created.id));
  });
});
