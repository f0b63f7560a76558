// The operator's view of a browser stack: the worker's capacity, serving and dependency gauges,
// and the gateway's dependency and key-store gauges, read from their /metrics listeners.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';

let stack: BrowserStack;
before(async () => {
  stack = await startBrowserStack({ workerEnv: { BROWSER_MAX_SESSIONS: '3' } });
});
after(() => stack?.stop());

/** The value of one series in a Prometheus text page, or undefined when it is not there. */
function valueOf(page: string, metric: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of page.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!match || match[1] !== metric) continue;
    if (Object.entries(labels).every(([k, v]) => (match[2] ?? '').includes(`${k}="${v}"`)))
      return Number(match[3]);
  }
  return undefined;
}

/** Scrapes `url` until `ready` holds (the first probe round runs right after start), for 15 s at most. */
async function scrapeUntil(url: string, ready: (page: string) => boolean): Promise<string> {
  let page = '';
  for (const deadline = Date.now() + 15_000; Date.now() < deadline;) {
    page = await (await fetch(url)).text();
    if (ready(page)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return page;
}

test('the browser worker reports its capacity, that it serves, and its NATS and S3 as reachable', async () => {
  const worker = stack.workers[0]!;
  const page = await scrapeUntil(
    worker.metricsUrl,
    (text) =>
      valueOf(text, 'switchboard_dependency_up', { dependency: 'nats' }) === 1 &&
      valueOf(text, 'switchboard_dependency_up', { dependency: 's3' }) === 1,
  );
  assert.equal(valueOf(page, 'browser_session_capacity', { service: 'browser' }), 3);
  assert.equal(valueOf(page, 'switchboard_serving', { service: 'browser' }), 1);
  assert.equal(valueOf(page, 'switchboard_dependency_up', { dependency: 'nats' }), 1);
  assert.equal(valueOf(page, 'switchboard_dependency_up', { dependency: 's3' }), 1);
  assert.equal(
    valueOf(page, 'switchboard_dependency_up', { dependency: 'redis' }),
    undefined,
    'it uses no Redis',
  );

  // A session in use counts against the capacity, which stays what it was configured to.
  const key = await createKey(stack.gateway, { tier: 'professional' });
  const created = await fetch(`${stack.gateway.url}/api/browser/session/create`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(created.status, 201);
  assert.equal(await worker.metric('browser_active_sessions'), 1);
  assert.equal(await worker.metric('browser_session_capacity'), 3);
});

test('the gateway reports NATS and Redis as reachable and its key view as current', async () => {
  const page = await scrapeUntil(
    stack.gateway.metricsUrl,
    (text) =>
      valueOf(text, 'switchboard_dependency_up', { dependency: 'nats' }) === 1 &&
      valueOf(text, 'switchboard_dependency_up', { dependency: 'redis' }) === 1,
  );
  assert.equal(valueOf(page, 'switchboard_dependency_up', { dependency: 'nats' }), 1);
  assert.equal(valueOf(page, 'switchboard_dependency_up', { dependency: 'redis' }), 1);
  assert.equal(valueOf(page, 'switchboard_dependency_up', { dependency: 's3' }), undefined);
  const age = valueOf(page, 'switchboard_key_store_age_seconds', { service: 'gateway' });
  assert.ok(age !== undefined, 'the key store age is exported');
  // NATS is pinged twice a second; the staleness limit (30 s by default) is far above that.
  assert.ok(age < 30, `key view confirmed ${age} s ago`);
});
