// The /webhooks calls against a real gateway, its real webhook store (PostgreSQL) and a real DNS
// server: registration with the secret shown once, reads, edits, deletion, rotation, the test
// event and the delivery log; another key's endpoint is 404; the 21st endpoint, an unknown event
// type and URLs the address guard refuses (a name resolving inside, loopback, http://,
// credentials) are 400; the OpenAPI document lists the calls; the admin view shows them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startGateway } from '../support/gateway.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
let dns: DnsServer;
let a: CreatedKey;
let b: CreatedKey;

/** Names the gateway resolves through the test's own DNS server (WEBHOOK_DNS_SERVERS). */
const PUBLIC_NAME = 'hooks.public.test';
const INSIDE_NAME = 'hooks.inside.test';
const PUBLIC_URL = `https://${PUBLIC_NAME}/switchboard`;

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
  secret?: string;
}

before(async () => {
  dns = await startDnsServer({ [PUBLIC_NAME]: ['93.184.215.14'], [INSIDE_NAME]: ['10.0.0.1'] });
  stack = await startStack({
    env: {
      WEBHOOK_DNS_SERVERS: dns.address,
      WEBHOOK_ALLOWED_HOSTS: 'receiver.exempt.test:8080',
    },
  });
  // A rate limit of their own: this file makes more calls a minute than the basic tier allows.
  [a, b] = await Promise.all([
    createKey(stack.gateway, { rate_limit_per_minute: 100_000 }),
    createKey(stack.gateway, { rate_limit_per_minute: 100_000 }),
  ]);
});
after(async () => {
  await stack?.stop();
  await dns?.close();
});

function call(key: CreatedKey, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${stack.gateway.url}${path}`, {
    method,
    headers: { ...bearer(key.key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function ok<T>(res: Response, status: number): Promise<T> {
  assert.equal(res.status, status, await res.clone().text());
  return (await res.json()) as T;
}

async function register(key: CreatedKey, body: Record<string, unknown> = {}): Promise<Endpoint> {
  return ok<Endpoint>(await call(key, 'POST', '/webhooks', { url: PUBLIC_URL, ...body }), 201);
}

describe('registration', () => {
  test('answers the endpoint in the documented field order, with its secret only then', async () => {
    const created = await register(a, { events: ['animate.job.*'], description: 'jobs' });
    assert.deepEqual(Object.keys(created), [
      'id',
      'url',
      'events',
      'description',
      'status',
      'disabled_reason',
      'created_at',
      'updated_at',
      'secret',
    ]);
    assert.match(created.id, /^wh_/);
    assert.match(created.secret!, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(Buffer.from(created.secret!.slice('whsec_'.length), 'base64').length, 24);
    assert.deepEqual(
      { url: created.url, events: created.events, description: created.description, status: created.status },
      { url: PUBLIC_URL, events: ['animate.job.*'], description: 'jobs', status: 'enabled' },
    );

    const read = await ok<Endpoint>(await call(a, 'GET', `/webhooks/${created.id}`), 200);
    assert.equal(read.secret, undefined);
    const { secret: _shownOnce, ...withoutSecret } = created;
    assert.deepEqual(read, withoutSecret);
    const list = await ok<{ data: Endpoint[] }>(await call(a, 'GET', '/webhooks'), 200);
    assert.ok(list.data.some((endpoint) => endpoint.id === created.id));
    assert.ok(list.data.every((endpoint) => endpoint.secret === undefined));
    assert.doesNotMatch(JSON.stringify(list), /whsec_/);
  });

  test('events left out or empty mean every type', async () => {
    assert.deepEqual((await register(a)).events, ['*']);
    assert.deepEqual((await register(a, { events: [] })).events, ['*']);
  });

  test('an unknown event type is 400 naming events', async () => {
    for (const events of [['animate.job.exploded'], ['keys.created'], 'animate.job.queued', [42]]) {
      const res = await call(a, 'POST', '/webhooks', { url: PUBLIC_URL, events });
      assert.equal(res.status, 400, JSON.stringify(events));
      const error = await errorOf(res);
      assert.equal(error.code, 'invalid_request');
      assert.match(error.param ?? '', /^events/);
    }
  });

  test('a missing url is 400 naming url', async () => {
    const res = await call(a, 'POST', '/webhooks', { events: ['*'] });
    assert.equal(res.status, 400);
    assert.deepEqual({ code: (await errorOf(res)).code }, { code: 'invalid_request' });
  });
});

describe('the address guard at registration', () => {
  const refusals: [string, string][] = [
    ['a name resolving to a private address', `https://${INSIDE_NAME}/hook`],
    ['a loopback literal', 'https://127.0.0.1:9443/hook'],
    ['a metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['http:// to a public host', `http://${PUBLIC_NAME}/hook`],
    ['credentials in the URL', `https://user:secret@${PUBLIC_NAME}/hook`],
  ];
  for (const [what, url] of refusals) {
    test(`refuses ${what} with 400 url_not_allowed`, async () => {
      const res = await call(a, 'POST', '/webhooks', { url });
      assert.equal(res.status, 400);
      const error = await errorOf(res);
      assert.equal(error.code, 'url_not_allowed');
      assert.equal(error.param, 'url');
      // The resolved internal address is not the caller's business.
      assert.doesNotMatch(error.message, /10\.0\.0\.1/);
    });
  }

  test('refuses the same URLs in a PATCH', async () => {
    const endpoint = await register(a);
    const res = await call(a, 'PATCH', `/webhooks/${endpoint.id}`, { url: `https://${INSIDE_NAME}/hook` });
    assert.equal(res.status, 400);
    assert.equal((await errorOf(res)).code, 'url_not_allowed');
    assert.equal((await ok<Endpoint>(await call(a, 'GET', `/webhooks/${endpoint.id}`), 200)).url, PUBLIC_URL);
  });

  test('a name that does not resolve is 400 naming url', async () => {
    const res = await call(a, 'POST', '/webhooks', { url: 'https://nowhere.public.test/hook' });
    assert.equal(res.status, 400);
    const error = await errorOf(res);
    assert.deepEqual([error.code, error.param], ['invalid_request', 'url']);
  });

  test('an exempt host:port may use http://', async () => {
    dns.setRecords('receiver.exempt.test', ['127.0.0.1']);
    const endpoint = await register(a, { url: 'http://receiver.exempt.test:8080/hook' });
    assert.equal(endpoint.url, 'http://receiver.exempt.test:8080/hook');
    const other = await call(a, 'POST', '/webhooks', { url: 'http://receiver.exempt.test:8081/hook' });
    assert.equal((await errorOf(other)).code, 'url_not_allowed');
  });
});

describe('one endpoint', () => {
  test('PATCH changes the fields given and keeps the rest; disabling and enabling', async () => {
    const endpoint = await register(a, { events: ['browser.*'], description: 'before' });
    const edited = await ok<Endpoint>(
      await call(a, 'PATCH', `/webhooks/${endpoint.id}`, { description: 'after', status: 'disabled' }),
      200,
    );
    assert.deepEqual(
      [edited.description, edited.events, edited.status, edited.url],
      ['after', ['browser.*'], 'disabled', PUBLIC_URL],
    );
    assert.equal(edited.disabled_reason, 'owner');
    const enabled = await ok<Endpoint>(
      await call(a, 'PATCH', `/webhooks/${endpoint.id}`, { status: 'enabled' }),
      200,
    );
    assert.deepEqual([enabled.status, enabled.disabled_reason], ['enabled', null]);
    const bad = await call(a, 'PATCH', `/webhooks/${endpoint.id}`, { status: 'paused' });
    assert.deepEqual([(await errorOf(bad)).code, bad.status], ['invalid_request', 400]);
  });

  test('rotate-secret answers a new secret; the default grace is accepted, as is an explicit one', async () => {
    const endpoint = await register(a);
    const first = await ok<{ id: string; secret: string }>(
      await call(a, 'POST', `/webhooks/${endpoint.id}/rotate-secret`),
      200,
    );
    assert.deepEqual(Object.keys(first), ['id', 'secret']);
    assert.equal(first.id, endpoint.id);
    assert.match(first.secret, /^whsec_/);
    assert.notEqual(first.secret, endpoint.secret);
    const second = await ok<{ id: string; secret: string }>(
      await call(a, 'POST', `/webhooks/${endpoint.id}/rotate-secret`, { grace_seconds: 0 }),
      200,
    );
    assert.notEqual(second.secret, first.secret);
    for (const grace_seconds of [-1, 86_401, 1.5]) {
      const res = await call(a, 'POST', `/webhooks/${endpoint.id}/rotate-secret`, { grace_seconds });
      assert.equal(res.status, 400);
      assert.equal((await errorOf(res)).param, 'grace_seconds');
    }
  });

  test('the delivery log of a new endpoint is an empty page; test queues a delivery it then lists', async () => {
    const endpoint = await register(a);
    const empty = await ok<unknown>(await call(a, 'GET', `/webhooks/${endpoint.id}/deliveries`), 200);
    assert.deepEqual(empty, { data: [], has_more: false });

    const queued = await ok<{ event_id: string }>(
      await call(a, 'POST', `/webhooks/${endpoint.id}/test`),
      202,
    );
    assert.match(queued.event_id, /^evt_/);
    const page = await ok<{ data: Record<string, unknown>[]; has_more: boolean }>(
      await call(a, 'GET', `/webhooks/${endpoint.id}/deliveries?status=pending&limit=5`),
      200,
    );
    assert.equal(page.data.length, 1);
    const [delivery] = page.data;
    assert.deepEqual(Object.keys(delivery!), [
      'id',
      'event_id',
      'type',
      'status',
      'attempts',
      'response_status',
      'response_ms',
      'error',
      'created_at',
      'next_attempt_at',
    ]);
    assert.deepEqual(
      [delivery!.event_id, delivery!.type, delivery!.status, delivery!.attempts],
      [queued.event_id, 'webhook.test', 'pending', 0],
    );
    const failedOnly = await ok<{ data: unknown[] }>(
      await call(a, 'GET', `/webhooks/${endpoint.id}/deliveries?status=failed`),
      200,
    );
    assert.deepEqual(failedOnly.data, []);

    const redelivered = await call(
      a,
      'POST',
      `/webhooks/${endpoint.id}/deliveries/${String(delivery!.id)}/redeliver`,
    );
    assert.equal(redelivered.status, 202);
    const unknown = await call(a, 'POST', `/webhooks/${endpoint.id}/deliveries/whd_nothing/redeliver`);
    assert.deepEqual([unknown.status, (await errorOf(unknown)).code], [404, 'not_found']);
  });

  test('bad delivery-log queries are 400 naming the parameter', async () => {
    const endpoint = await register(a);
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['status=lost', 'status'],
    ]) {
      const res = await call(a, 'GET', `/webhooks/${endpoint.id}/deliveries?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal((await errorOf(res)).param, param);
    }
  });

  test('DELETE is 204, then the endpoint is gone', async () => {
    const endpoint = await register(a);
    const res = await call(a, 'DELETE', `/webhooks/${endpoint.id}`);
    assert.equal(res.status, 204);
    assert.equal(await res.text(), '');
    assert.equal((await call(a, 'GET', `/webhooks/${endpoint.id}`)).status, 404);
    assert.equal((await call(a, 'DELETE', `/webhooks/${endpoint.id}`)).status, 404);
  });
});

test("another key's endpoint is 404 not_found on every call, and is not listed", async () => {
  const endpoint = await register(a);
  const calls: [string, string, unknown?][] = [
    ['GET', `/webhooks/${endpoint.id}`],
    ['PATCH', `/webhooks/${endpoint.id}`, { description: 'mine now' }],
    ['POST', `/webhooks/${endpoint.id}/rotate-secret`],
    ['POST', `/webhooks/${endpoint.id}/test`],
    ['GET', `/webhooks/${endpoint.id}/deliveries`],
    ['POST', `/webhooks/${endpoint.id}/deliveries/whd_x/redeliver`],
    ['DELETE', `/webhooks/${endpoint.id}`],
    ['GET', '/webhooks/wh_unknown'],
  ];
  for (const [method, path, body] of calls) {
    const res = await call(b, method, path, body);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal((await errorOf(res)).code, 'not_found');
  }
  const listed = await ok<{ data: Endpoint[] }>(await call(b, 'GET', '/webhooks'), 200);
  assert.ok(!listed.data.some((e) => e.id === endpoint.id));
  // Still there, unchanged, for its owner.
  assert.equal((await ok<Endpoint>(await call(a, 'GET', `/webhooks/${endpoint.id}`), 200)).description, null);
});

test('a key has at most 20 endpoints: the 21st is 400 invalid_request saying so', async () => {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 100_000 });
  await Promise.all(Array.from({ length: 20 }, () => register(key)));
  const res = await call(key, 'POST', '/webhooks', { url: PUBLIC_URL });
  assert.equal(res.status, 400);
  const error = await errorOf(res);
  assert.equal(error.code, 'invalid_request');
  assert.match(error.message, /at most 20/);
  const list = await ok<{ data: Endpoint[] }>(await call(key, 'GET', '/webhooks'), 200);
  assert.equal(list.data.length, 20);
  // Deleting one makes room again.
  assert.equal((await call(key, 'DELETE', `/webhooks/${list.data[0]!.id}`)).status, 204);
  await register(key);
});

test('the admin view lists a key’s endpoints with their recent deliveries, never a secret', async () => {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 100_000 });
  const endpoint = await register(key, { description: 'admin view' });
  await ok(await call(key, 'POST', `/webhooks/${endpoint.id}/test`), 202);
  const view = await ok<{ data: (Endpoint & { recent_deliveries: { type: string }[] })[] }>(
    await admin(stack.gateway, 'GET', `/keys/${key.id}/webhooks`),
    200,
  );
  assert.equal(view.data.length, 1);
  assert.equal(view.data[0]!.id, endpoint.id);
  assert.deepEqual(
    view.data[0]!.recent_deliveries.map((d) => d.type),
    ['webhook.test'],
  );
  assert.doesNotMatch(JSON.stringify(view), /whsec_/);
  assert.equal((await admin(stack.gateway, 'GET', '/keys/nosuchkey/webhooks')).status, 404);
  // An API key cannot call it.
  assert.equal((await call(key, 'GET', `/admin/api/keys/${key.id}/webhooks`)).status, 401);
});

test('the OpenAPI document lists every webhook call', async () => {
  const document = await ok<{ paths: Record<string, Record<string, unknown>> }>(
    await fetch(`${stack.gateway.url}/openapi.json`),
    200,
  );
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  for (const expected of [
    'POST /webhooks',
    'GET /webhooks',
    'GET /webhooks/{id}',
    'PATCH /webhooks/{id}',
    'DELETE /webhooks/{id}',
    'POST /webhooks/{id}/rotate-secret',
    'POST /webhooks/{id}/test',
    'GET /webhooks/{id}/deliveries',
    'POST /webhooks/{id}/deliveries/{delivery_id}/redeliver',
    'GET /admin/api/keys/{id}/webhooks',
  ]) {
    assert.ok(operations.includes(expected), expected);
  }
});

test('without WEBHOOK_SECRETS_KEY the webhook calls answer 503 unavailable and the gateway is ready', async () => {
  // Empty means unset, as in a shell: it overrides the test gateways' default key.
  const gateway = await startGateway({ ...stack.gatewayEnv, WEBHOOK_SECRETS_KEY: '' });
  try {
    assert.equal((await fetch(`${gateway.url}/readyz`)).status, 200);
    const res = await fetch(`${gateway.url}/webhooks`, { headers: bearer(a.key) });
    assert.equal(res.status, 503);
    assert.equal((await errorOf(res)).code, 'unavailable');
  } finally {
    await gateway.stop();
  }
});
