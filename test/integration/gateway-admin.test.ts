import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connect, type NatsConnection } from 'nats';
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
  const nc: NatsConnection = await connect({ servers: stack.nats.url });
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
