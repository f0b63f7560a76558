// Security: partition behaviour is safe and honest. A gateway replica that loses NATS (the
// broker frozen with SIGSTOP: sockets open, nothing answers) reports itself unready within 2 s,
// keeps honouring keys from its cache only for KEYS_MAX_STALENESS_MS and then answers 503
// instead of trusting keys that may have been revoked meanwhile; admin calls are 503, not 500.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

const STALENESS_MS = 4000;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  stack = await startStack({ env: { KEYS_MAX_STALENESS_MS: String(STALENESS_MS) } });
  key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(async () => {
  stack?.nats.resume();
  await stack?.stop();
});

/** An authenticated call that needs no worker: a stored image that does not exist is 404. */
const authedCall = () =>
  fetch(`${stack.gateway.url}/api/images/img-00000000-0000-4000-8000-000000000000.png`, {
    headers: bearer(key.key),
  });
const readyStatus = async () => (await fetch(`${stack.gateway.url}/readyz`)).status;

async function waitFor(check: () => Promise<boolean>, limitMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > limitMs) assert.fail(`${what}: not within ${limitMs} ms`);
    await sleep(100);
  }
  return Date.now() - started;
}

test('NATS frozen: unready within 2 s, cached keys until the staleness bound, then 503', async () => {
  assert.equal(await readyStatus(), 200);
  assert.equal((await authedCall()).status, 404);

  stack.nats.pause();
  const pausedAt = Date.now();
  try {
    await waitFor(async () => (await readyStatus()) === 503, 2000, '/readyz 503 after NATS froze');
    const body = (await (await fetch(`${stack.gateway.url}/readyz`)).json()) as {
      checks: { key_store: string };
    };
    assert.equal(body.checks.key_store, 'unreachable');

    // Still inside the staleness bound: the cached key is honoured.
    assert.ok(Date.now() - pausedAt < STALENESS_MS - 1000, 'the machine is too slow for this check');
    assert.equal((await authedCall()).status, 404, 'cached keys work inside the bound');

    // Admin calls need NATS itself: 503 unavailable at once, never a 500 or a hang.
    const started = Date.now();
    const listing = await admin(stack.gateway, 'GET', '/keys');
    assert.equal(listing.status, 503);
    assert.equal((await errorOf(listing)).code, 'unavailable');
    const creating = await admin(stack.gateway, 'POST', '/keys', { name: 'during-partition', tier: 'basic' });
    assert.equal(creating.status, 503);
    assert.ok(Date.now() - started < 2000, 'admin calls answer at once');

    // Past the bound the replica refuses to vouch for any key.
    await sleep(Math.max(0, pausedAt + STALENESS_MS + 1000 - Date.now()));
    const stale = await authedCall();
    assert.equal(stale.status, 503);
    assert.equal((await errorOf(stale)).code, 'unavailable');
    assert.match(stale.headers.get('retry-after') ?? '', /^\d+$/);
  } finally {
    stack.nats.resume();
  }

  await waitFor(async () => (await readyStatus()) === 200, 10_000, '/readyz 200 after NATS came back');
  assert.equal((await authedCall()).status, 404, 'keys work again');
  assert.equal((await admin(stack.gateway, 'GET', '/keys')).status, 200);
});
