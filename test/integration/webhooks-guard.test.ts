// Where webhooks may go, and the calls around one delivery (§11): loopback, private and metadata
// targets are refused at registration (`400 url_not_allowed`) however they are spelled or named; a
// name that resolved to a public address when registered and to loopback later is refused when the
// sender connects, and the loopback listener never sees a connection, nor when a receiver redirects
// there; a test event arrives signed; redeliver re-sends the same event; the delivery log pages;
// other keys' endpoints are 404. Names resolve through a real DNS server (gateway and sender both
// use it), never a stub.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { createKey } from '../support/admin.js';
import { errorOf, startStack, type Stack } from '../support/stack.js';
import {
  listDeliveries,
  registerEndpoint,
  sendTestEvent,
  startReceiver,
  startSender,
  untilDeliveries,
  verifyWebhook,
  webhookSettings,
  webhooksCall,
  type DeliveryView,
  type Receiver,
} from '../support/webhooks.js';
import type { WorkerProcess } from '../support/worker.js';

/** A public address (example.com's) that nothing in the test ever connects to. */
const PUBLIC_ADDRESS = '93.184.215.14';

let dns: DnsServer;
let hook: Receiver;
let stack: Stack;
let sender: WorkerProcess;
/** A plain TCP listener on loopback, not exempt: the place a rebinding attack aims at. */
let internal: Server;
let internalPort: number;
let internalConnections = 0;

before(async () => {
  dns = await startDnsServer({
    'public.hooks.test': [PUBLIC_ADDRESS],
    'private.hooks.test': ['10.20.30.40'],
    'loopback.hooks.test': ['127.0.0.1'],
    'metadata.hooks.test': ['169.254.169.254'],
    'mixed.hooks.test': [PUBLIC_ADDRESS, '192.168.1.10'],
    'rebind.hooks.test': [PUBLIC_ADDRESS],
  });
  internal = createServer((socket) => {
    internalConnections += 1;
    socket.destroy();
  });
  internal.listen(0, '127.0.0.1');
  await once(internal, 'listening');
  internalPort = (internal.address() as AddressInfo).port;
  hook = await startReceiver();
  // Only the receiver's own port is exempt: the rest of 127.0.0.1 is as refused as anywhere inside.
  const settings = await webhookSettings({ allowedHosts: `127.0.0.1:${hook.port}`, dnsServers: dns.address });
  stack = await startStack({ env: settings.gatewayEnv });
  sender = await startSender(stack.nats, settings);
});
after(async () => {
  await sender?.stop();
  await stack?.stop();
  await hook?.close();
  internal?.close();
  await dns?.close();
});

const newKey = async () => (await createKey(stack.gateway, { tier: 'basic' })).key;

test('registering a loopback, private, link-local, CGNAT or metadata target is 400 url_not_allowed', async () => {
  const key = await newKey();
  const p = internalPort;
  const refused = [
    `http://127.0.0.1:${p}/hook`,
    `https://127.0.0.1:${p}/hook`,
    `https://127.1:${p}/`,
    `https://[::1]:${p}/`,
    `https://[::ffff:127.0.0.1]:${p}/`,
    `https://localhost:${p}/`,
    'https://10.0.0.5/hook',
    'https://192.168.0.1/hook',
    'https://100.64.0.1/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://[fd00::1]/hook',
    'https://private.hooks.test/hook',
    `https://loopback.hooks.test:${p}/hook`,
    'https://metadata.hooks.test/',
    'https://mixed.hooks.test/hook',
    // Not https, and not an exempt host.
    'http://public.hooks.test/hook',
    // Credentials in the URL.
    'https://user:secret@public.hooks.test/hook',
  ];
  for (const url of refused) {
    const res = await webhooksCall(stack.gateway, key, 'POST', '', { url });
    assert.equal(res.status, 400, `${url} → ${res.status}`);
    const error = await errorOf(res);
    assert.equal(error.code, 'url_not_allowed', url);
    assert.equal(error.param, 'url', url);
    for (const address of ['10.20.30.40', '192.168.1.10', '169.254.169.254']) {
      assert.ok(!error.message.includes(address) || url.includes(address), `${url}: ${error.message}`);
    }
    assert.ok(!error.message.includes('127.0.0.1') || url.includes('127.0.0.1'), error.message);
  }
  const list = (await (await webhooksCall(stack.gateway, key, 'GET')).json()) as { data: unknown[] };
  assert.deepEqual(list.data, [], 'nothing refused was kept');

  // The same rule for a PATCH; the exempt receiver and a public name are accepted.
  const endpoint = await registerEndpoint(stack.gateway, key, { url: hook.url });
  await registerEndpoint(stack.gateway, key, { url: 'https://public.hooks.test/hook' });
  const patched = await webhooksCall(stack.gateway, key, 'PATCH', `/${endpoint.id}`, {
    url: 'https://private.hooks.test/hook',
  });
  assert.equal(patched.status, 400);
  assert.equal((await errorOf(patched)).code, 'url_not_allowed');
  const kept = (await (await webhooksCall(stack.gateway, key, 'GET', `/${endpoint.id}`)).json()) as {
    url: string;
  };
  assert.equal(kept.url, hook.url);
});

test('a name that resolves inside only after registration is refused when the sender connects', async () => {
  const key = await newKey();
  const url = `https://rebind.hooks.test:${internalPort}/hook`;
  const endpoint = await registerEndpoint(stack.gateway, key, { url });
  dns.setRecords('rebind.hooks.test', ['127.0.0.1']);
  await sendTestEvent(stack.gateway, key, endpoint.id);

  // Every attempt of the schedule is refused, then the delivery fails.
  const [delivery] = await untilDeliveries(
    stack.gateway,
    key,
    endpoint.id,
    (d) => d[0]?.status === 'failed',
    'the delivery failed',
  );
  assert.equal(delivery!.attempts, 4);
  assert.equal(delivery!.response_status, null);
  assert.notEqual(delivery!.error, null);
  assert.ok(
    !delivery!.error!.includes('127.0.0.1'),
    `the resolved address is not revealed: ${delivery!.error}`,
  );
  assert.equal(internalConnections, 0, 'the loopback listener never saw a connection');
});

test('a redirect towards the inside is a failed attempt, never followed', async () => {
  const key = await newKey();
  const before = hook.requests.length;
  hook.script = () => ({ status: 307, headers: { location: `http://127.0.0.1:${internalPort}/admin` } });
  try {
    const endpoint = await registerEndpoint(stack.gateway, key, { url: hook.url });
    await sendTestEvent(stack.gateway, key, endpoint.id);
    const [delivery] = await untilDeliveries(
      stack.gateway,
      key,
      endpoint.id,
      (d) => d[0]?.status === 'failed',
      'the delivery failed',
    );
    assert.equal(delivery!.response_status, 307);
    assert.equal(hook.requests.length - before, delivery!.attempts);
    assert.equal(internalConnections, 0, 'the Location was never visited');
  } finally {
    hook.script = () => ({ status: 200 });
  }
});

test('a test event arrives signed; redeliver sends the same event again with the same webhook-id', async () => {
  const key = await newKey();
  const before = hook.requests.length;
  const endpoint = await registerEndpoint(stack.gateway, key, { url: hook.url });
  await sendTestEvent(stack.gateway, key, endpoint.id);

  const [first] = (await hook.untilCount(before + 1)).slice(before);
  const payload = verifyWebhook(endpoint.secret, first!);
  assert.equal(payload.type, 'webhook.test');
  const [delivery] = await untilDeliveries(
    stack.gateway,
    key,
    endpoint.id,
    (d) => d[0]?.status === 'succeeded',
    'the test delivery succeeded',
  );
  assert.equal(delivery!.type, 'webhook.test');
  assert.equal(delivery!.event_id, first!.id);
  assert.equal(delivery!.attempts, 1);
  assert.equal(delivery!.response_status, 200);
  assert.equal(typeof delivery!.response_ms, 'number');
  assert.equal(delivery!.error, null);

  const res = await webhooksCall(
    stack.gateway,
    key,
    'POST',
    `/${endpoint.id}/deliveries/${delivery!.id}/redeliver`,
  );
  assert.equal(res.status, 202, await res.text());
  const [again] = (await hook.untilCount(before + 2)).slice(before + 1);
  assert.equal(again!.id, first!.id, 'the same webhook-id');
  assert.equal(again!.body, first!.body, 'the same event');
  verifyWebhook(endpoint.secret, again!);
  await untilDeliveries(
    stack.gateway,
    key,
    endpoint.id,
    (d) => d.length === 1 && d[0]!.attempts === 2 && d[0]!.status === 'succeeded',
    'the redelivery recorded as a second attempt of the same delivery',
  );
});

test('the delivery log pages through every delivery once', async () => {
  const key = await newKey();
  const before = hook.requests.length;
  const endpoint = await registerEndpoint(stack.gateway, key, { url: hook.url });
  const total = 7;
  for (let i = 0; i < total; i++) await sendTestEvent(stack.gateway, key, endpoint.id);
  await hook.untilCount(before + total);
  await untilDeliveries(
    stack.gateway,
    key,
    endpoint.id,
    (d) => d.length === total && d.every((x) => x.status === 'succeeded'),
    `${total} succeeded deliveries`,
  );

  const seen: DeliveryView[] = [];
  let after: string | undefined;
  for (let pages = 0; ; pages++) {
    assert.ok(pages < total, 'paging ends');
    const page = await listDeliveries(stack.gateway, key, endpoint.id, {
      limit: '3',
      ...(after === undefined ? {} : { after }),
    });
    assert.ok(page.data.length <= 3);
    seen.push(...page.data);
    if (!page.has_more) break;
    assert.equal(page.data.length, 3, 'a page before the last is full');
    after = page.data.at(-1)!.id;
  }
  assert.equal(seen.length, total);
  assert.equal(new Set(seen.map((d) => d.id)).size, total, 'no delivery twice');

  const failedOnly = await listDeliveries(stack.gateway, key, endpoint.id, { status: 'failed' });
  assert.deepEqual(failedOnly, { data: [], has_more: false });
  const tooMany = await webhooksCall(stack.gateway, key, 'GET', `/${endpoint.id}/deliveries?limit=101`);
  assert.equal(tooMany.status, 400);
  assert.equal((await errorOf(tooMany)).param, 'limit');
});

test("another key's endpoint is 404 not_found for every call", async () => {
  const [owner, stranger] = [await newKey(), await newKey()];
  const endpoint = await registerEndpoint(stack.gateway, owner, { url: hook.url });
  await sendTestEvent(stack.gateway, owner, endpoint.id);
  const [delivery] = await untilDeliveries(
    stack.gateway,
    owner,
    endpoint.id,
    (d) => d[0]?.status === 'succeeded',
    'the owner’s test delivery',
  );

  const before = hook.requests.length;
  for (const [method, path, body] of [
    ['GET', `/${endpoint.id}`],
    ['PATCH', `/${endpoint.id}`, { status: 'disabled' }],
    ['POST', `/${endpoint.id}/rotate-secret`, {}],
    ['POST', `/${endpoint.id}/test`],
    ['GET', `/${endpoint.id}/deliveries`],
    ['POST', `/${endpoint.id}/deliveries/${delivery!.id}/redeliver`],
    ['DELETE', `/${endpoint.id}`],
  ] as const) {
    const res = await webhooksCall(stack.gateway, stranger, method, path, body);
    assert.equal(res.status, 404, `${method} ${path} → ${res.status}`);
    assert.equal((await errorOf(res)).code, 'not_found');
  }
  const list = (await (await webhooksCall(stack.gateway, stranger, 'GET')).json()) as { data: unknown[] };
  assert.deepEqual(list.data, []);
  const still = (await (await webhooksCall(stack.gateway, owner, 'GET', `/${endpoint.id}`)).json()) as {
    status: string;
  };
  assert.equal(still.status, 'enabled');
  // Neither the stranger's test event nor its redelivery went anywhere.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal(hook.requests.length, before);
});
