import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
import { JobBoard, newJobId, type BackendName } from '@switchboard/jobs';
import { admin, bearer, createKey } from '../support/admin.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack({ gateways: 2 });
});
after(() => stack?.stop());

const models = (url: string, key: string) => fetch(`${url}/models`, { headers: bearer(key) });

async function eventually(check: () => Promise<boolean>, withinMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > withinMs) throw new Error(`not true within ${withinMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

test('admin calls need the admin token, never an API key', async () => {
  const key = await createKey(stack.gateway);
  const withKey = await fetch(`${stack.gateway.url}/admin/api/keys`, { headers: bearer(key.key) });
  assert.equal(withKey.status, 401);
  assert.equal((await errorOf(withKey)).code, 'unauthorized');
  assert.equal((await fetch(`${stack.gateway.url}/admin/api/keys`)).status, 401);
});

test('create shows the secret once; list never does', async () => {
  const res = await admin(stack.gateway, 'POST', '/keys', {
    name: 'ci bot',
    tier: 'professional',
    ip_allowlist: ['10.0.0.0/8', '2001:db8::/32'],
    rate_limit_per_minute: 120,
  });
  assert.equal(res.status, 201);
  const created = (await res.json()) as Record<string, unknown>;
  assert.match(String(created.key), /^sb_[a-z0-9]+_[A-Za-z0-9]{22,}$/);
  assert.equal(created.name, 'ci bot');
  assert.equal(created.tier, 'professional');
  assert.deepEqual(created.ip_allowlist, ['10.0.0.0/8', '2001:db8::/32']);
  assert.equal(created.rate_limit_per_minute, 120);
  assert.match(String(created.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

  const listed = await admin(stack.gateway, 'GET', '/keys');
  assert.equal(listed.status, 200);
  const text = await listed.text();
  assert.ok(!text.includes(String(created.key).split('_')[2]!), 'no secret in the list');
  assert.ok(!/hash/i.test(text), 'no hashes in the list');
  const { data } = JSON.parse(text) as { data: Record<string, unknown>[] };
  const row = data.find((k) => k.id === created.id);
  assert.ok(row);
  assert.equal(row.key, undefined);
  assert.equal(row.status, 'active');
  assert.equal(typeof row.prefix, 'string');
  assert.ok('last_used_at' in row);
});

test('patch changes the tier; bad input is 400 with param', async () => {
  const key = await createKey(stack.gateway, { tier: 'basic' });
  const patched = await admin(stack.gateway, 'PATCH', `/keys/${key.id}`, { tier: 'enterprise' });
  assert.equal(patched.status, 200);
  assert.equal(((await patched.json()) as { tier: string }).tier, 'enterprise');
  await eventually(
    async () =>
      (await models(stack.gateway.url, key.key)).headers.get('ratelimit-policy') === '"default";q=6000;w=60',
    2000,
  );

  const bad = await admin(stack.gateway, 'PATCH', `/keys/${key.id}`, { tier: 'platinum' });
  assert.equal(bad.status, 400);
  assert.equal((await errorOf(bad)).param, 'tier');
  const badCidr = await admin(stack.gateway, 'POST', '/keys', {
    name: 'x',
    tier: 'basic',
    ip_allowlist: ['10.0.0.0/33'],
  });
  assert.equal(badCidr.status, 400);
  assert.match((await errorOf(badCidr)).param ?? '', /^ip_allowlist/);
  const missing = await admin(stack.gateway, 'PATCH', '/keys/doesnotexist', { name: 'y' });
  assert.equal(missing.status, 404);
  assert.equal((await errorOf(missing)).code, 'not_found');
});

test('patch answers with the last-used time, as get does', async () => {
  const key = await createKey(stack.gateway, { tier: 'basic' });
  assert.equal((await models(stack.gateway.url, key.key)).status, 200);
  const got = await admin(stack.gateway, 'GET', `/keys/${key.id}`);
  const { last_used_at: used } = (await got.json()) as { last_used_at: string | null };
  assert.match(String(used), /^\d{4}-\d\d-\d\dT/);
  const patched = await admin(stack.gateway, 'PATCH', `/keys/${key.id}`, { name: 'renamed' });
  assert.equal(patched.status, 200);
  const view = (await patched.json()) as { name: string; last_used_at: string | null };
  assert.equal(view.name, 'renamed');
  assert.equal(view.last_used_at, used);
});

test('rotate with grace: the old secret works until the grace ends, the new one at once', async () => {
  const key = await createKey(stack.gateway);
  const res = await admin(stack.gateway, 'POST', `/keys/${key.id}/rotate`, { grace_seconds: 2 });
  assert.equal(res.status, 200);
  const rotated = (await res.json()) as { id: string; key: string };
  assert.equal(rotated.id, key.id, 'rotation keeps the key id');
  assert.notEqual(rotated.key, key.key);
  await eventually(async () => (await models(stack.gateways[1]!.url, rotated.key)).status === 200, 2000);
  assert.equal((await models(stack.gateway.url, key.key)).status, 200, 'old secret still works in the grace');
  await sleep(2200);
  assert.equal((await models(stack.gateway.url, key.key)).status, 401);
  assert.equal((await models(stack.gateways[1]!.url, key.key)).status, 401);
  assert.equal((await models(stack.gateway.url, rotated.key)).status, 200);

  const badGrace = await admin(stack.gateway, 'POST', `/keys/${key.id}/rotate`, { grace_seconds: 86_401 });
  assert.equal(badGrace.status, 400);
  assert.equal((await errorOf(badGrace)).param, 'grace_seconds');
});

test('revoke on one replica is refused by the other within 2 s', async () => {
  const key = await createKey(stack.gateway);
  await eventually(async () => (await models(stack.gateways[1]!.url, key.key)).status === 200, 2000);
  const res = await admin(stack.gateway, 'DELETE', `/keys/${key.id}`);
  assert.equal(res.status, 204);
  const took = await eventually(
    async () => (await models(stack.gateways[1]!.url, key.key)).status === 401,
    2000,
  );
  assert.ok(took <= 2000);
  const { data } = (await (await admin(stack.gateways[1]!, 'GET', '/keys')).json()) as {
    data: { id: string; status: string }[];
  };
  assert.equal(data.find((k) => k.id === key.id)?.status, 'revoked');
});

test('key lifecycle events are published on NATS, with the key id and never the secret', async () => {
  const nc: NatsConnection = await connect(stack.nats.connectOptions('operator'));
  try {
    const seen: { subject: string; body: Record<string, unknown>; raw: string }[] = [];
    const sub = nc.subscribe('switchboard.events.keys.>');
    const collecting = (async () => {
      for await (const message of sub) {
        const raw = message.string();
        seen.push({ subject: message.subject, body: JSON.parse(raw) as Record<string, unknown>, raw });
      }
    })();
    await nc.flush();
    const key = await createKey(stack.gateway);
    const rotated = (await (await admin(stack.gateway, 'POST', `/keys/${key.id}/rotate`, {})).json()) as {
      key: string;
    };
    assert.equal((await admin(stack.gateway, 'DELETE', `/keys/${key.id}`)).status, 204);
    await eventually(async () => seen.length >= 3, 2000);
    sub.unsubscribe();
    await collecting;
    assert.deepEqual(
      seen.map((e) => e.subject),
      [
        'switchboard.events.keys.created',
        'switchboard.events.keys.rotated',
        'switchboard.events.keys.revoked',
      ],
    );
    for (const event of seen) {
      assert.equal(event.body.key_id, key.id);
      assert.ok(
        !event.raw.includes(key.key.split('_')[2]!) && !event.raw.includes(rotated.key.split('_')[2]!),
        'no secret in events',
      );
    }
  } finally {
    await nc.close();
  }
});

interface AdminJobRow {
  job_id: string;
  key_id: string;
  backend: string;
  status: string;
  progress: number;
  attempts: number;
  result: unknown;
  error: unknown;
}
interface AdminJobPage {
  data: AdminJobRow[];
  has_more: boolean;
}

test("the admin lists every key's jobs newest first and cancels any of them", async () => {
  const nc: NatsConnection = await connect(stack.nats.connectOptions('operator'));
  try {
    // Submitted straight on the board, as the gateway does for POST /animate (the gateway's own
    // settings: 30 s ack wait, a week of retention).
    const board = await JobBoard.open(nc, { ackWaitMs: 30_000, jobRetentionMs: 7 * 24 * 3_600_000 });
    const [first, second] = await Promise.all([
      createKey(stack.gateway, { tier: 'professional' }),
      createKey(stack.gateway, { tier: 'enterprise' }),
    ]);
    const base = Date.now();
    const submit = async (i: number, owner: string, backend: BackendName) => {
      const jobId = newJobId(base + i);
      await board.submit({
        jobId,
        ownerKeyId: owner,
        backend,
        params: { seed: 1, motion_bucket_id: 127, noise_aug_strength: 0.02 },
        inputs: { image: 'images/img-admin-test.png' },
        activeLimit: 10,
      });
      return jobId;
    };
    const oldest = await submit(0, first.id, 'video-diffusion');
    const middle = await submit(1, second.id, 'portrait');
    const newest = await submit(2, first.id, 'avatar');

    const list = async (query = '', gateway = stack.gateway) => {
      const res = await admin(gateway, 'GET', `/jobs${query}`);
      assert.equal(res.status, 200, query);
      return (await res.json()) as AdminJobPage;
    };
    const all = await list();
    assert.deepEqual(
      all.data.map((j) => [j.job_id, j.key_id, j.backend, j.status, j.progress, j.attempts]),
      [
        [newest, first.id, 'avatar', 'queued', 0, 0],
        [middle, second.id, 'portrait', 'queued', 0, 0],
        [oldest, first.id, 'video-diffusion', 'queued', 0, 0],
      ],
    );
    assert.equal(all.has_more, false);
    assert.deepEqual([all.data[0]!.result, all.data[0]!.error], [null, null]);

    const page = await list('?limit=2');
    assert.deepEqual([page.data.map((j) => j.job_id), page.has_more], [[newest, middle], true]);
    const next = await list(`?limit=2&after=${middle}`);
    assert.deepEqual([next.data.map((j) => j.job_id), next.has_more], [[oldest], false]);
    assert.deepEqual((await list('?status=canceled')).data, []);

    for (const [query, param] of [
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?limit=ten', 'limit'],
      ['?status=done', 'status'],
      ['?after=not-a-job', 'after'],
    ]) {
      const res = await admin(stack.gateway, 'GET', `/jobs${query}`);
      assert.equal(res.status, 400, query);
      const error = await errorOf(res);
      assert.deepEqual([error.code, error.param], ['invalid_request', param], query);
    }

    // The status call carries the same rows (the dashboard's list).
    const status = (await (await admin(stack.gateway, 'GET', '/status')).json()) as {
      animation_jobs: AdminJobRow[];
    };
    assert.deepEqual(status.animation_jobs, all.data);

    // Cancel on one replica: the job event, then the other replica lists it as canceled.
    const seen: { subject: string; body: Record<string, unknown> }[] = [];
    const sub = nc.subscribe('switchboard.events.animate.job.>');
    const collecting = (async () => {
      for await (const message of sub) {
        seen.push({ subject: message.subject, body: message.json<Record<string, unknown>>() });
      }
    })();
    await nc.flush();
    const canceled = await admin(stack.gateway, 'DELETE', `/jobs/${middle}`);
    assert.equal(canceled.status, 200);
    const row = (await canceled.json()) as AdminJobRow;
    assert.deepEqual([row.job_id, row.key_id, row.status], [middle, second.id, 'canceled']);
    await eventually(async () => seen.length >= 1, 2000);
    sub.unsubscribe();
    await collecting;
    assert.deepEqual(
      seen.map((e) => [e.subject, e.body.job_id, e.body.key_id]),
      [['switchboard.events.animate.job.canceled', middle, second.id]],
    );
    assert.equal((await board.get(second.id, middle)).status, 'canceled', "the owner's view too");
    const other = await list('?status=canceled', stack.gateways[1]);
    assert.deepEqual(
      other.data.map((j) => j.job_id),
      [middle],
    );

    const again = await admin(stack.gateway, 'DELETE', `/jobs/${middle}`);
    assert.equal(again.status, 409);
    assert.equal((await errorOf(again)).code, 'job_finished');
    for (const id of [newJobId(), 'not-a-job', `${first.id}.${oldest}`]) {
      const missing = await admin(stack.gateway, 'DELETE', `/jobs/${encodeURIComponent(id)}`);
      assert.equal(missing.status, 404, id);
      assert.equal((await errorOf(missing)).code, 'job_not_found', id);
    }
    assert.equal((await board.get(first.id, oldest)).status, 'queued', 'untouched');
  } finally {
    await nc.close();
  }
});

test('the jobs calls need the admin token, never an API key', async () => {
  const key = await createKey(stack.gateway, { tier: 'enterprise' });
  for (const [method, path] of [
    ['GET', '/admin/api/jobs'],
    ['DELETE', `/admin/api/jobs/${newJobId()}`],
  ] as const) {
    const withKey = await fetch(`${stack.gateway.url}${path}`, { method, headers: bearer(key.key) });
    assert.equal(withKey.status, 401, `${method} ${path}`);
    assert.equal((await errorOf(withKey)).code, 'unauthorized');
    assert.equal((await fetch(`${stack.gateway.url}${path}`, { method })).status, 401);
  }
});
