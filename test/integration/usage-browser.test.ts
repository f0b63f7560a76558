// The browser meters: session_seconds from creation to close, and to expiry of a session left
// idle with no request running (nothing in the gateway is waiting on it when it ends), and one
// capture per screenshot stored. Real Chromium in a real browser worker, a real usage store.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { until } from '../support/stack.js';
import { untilUsage, usageAroundToday } from '../support/usage.js';

const IDLE_TIMEOUT_MS = 2_000;
let stack: BrowserStack;

before(async () => {
  stack = await startBrowserStack({
    workerEnv: { BROWSER_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS), BROWSER_POOL_SIZE: '1' },
  });
});
after(async () => {
  await stack?.stop();
});

const freshKey = () => createKey(stack.gateway, { tier: 'professional', rate_limit_per_minute: null });
const usageOf = (key: CreatedKey) => () => usageAroundToday(stack.gateway, key.key);

function post(key: CreatedKey, path: string, body: unknown = {}) {
  return fetch(`${stack.gateway.url}/api/browser${path}`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function createSession(key: CreatedKey): Promise<{ id: string; createdAt: number }> {
  const res = await post(key, '/session/create');
  assert.equal(res.status, 201, await res.clone().text());
  const body = (await res.json()) as { session_id: string; created_at: string };
  return { id: body.session_id, createdAt: Date.parse(body.created_at) };
}

test('a closed session: its seconds from creation to close, and one capture per screenshot', async () => {
  const key = await freshKey();
  const session = await createSession(key);
  assert.equal(
    (await post(key, `/session/${session.id}/navigate`, { url: `${stack.site.origin}/form` })).status,
    200,
  );
  for (let i = 0; i < 2; i++) assert.equal((await post(key, `/session/${session.id}/capture`)).status, 200);
  const closing = Date.now();
  assert.equal((await post(key, `/session/${session.id}/close`)).status, 200);
  const closed = Date.now();

  const seen = await untilUsage(
    usageOf(key),
    (t) => t['browser/null/session_seconds'] !== undefined && t['browser/null/captures'] === 2,
    'the session and its captures',
  );
  assert.deepEqual(Object.keys(seen).sort(), ['browser/null/captures', 'browser/null/session_seconds']);
  const seconds = seen['browser/null/session_seconds']!;
  assert.ok(
    seconds >= (closing - session.createdAt) / 1000 && seconds <= (closed - session.createdAt) / 1000,
    `${seconds} s; the close was asked ${(closing - session.createdAt) / 1000} s and answered ` +
      `${(closed - session.createdAt) / 1000} s after creation`,
  );
});

test('a session that expires while no request runs is counted to its expiry', async () => {
  const key = await freshKey();
  const worker = stack.workers[0]!;
  const expiredBefore = await worker.metric('browser_sessions_ended_total', { reason: 'expired' });
  const session = await createSession(key);
  // Watched on the worker's metrics: a call on the session would be activity.
  await until(
    async () => (await worker.metric('browser_sessions_ended_total', { reason: 'expired' })) > expiredBefore,
    'the session expired',
  );
  const expiredBy = Date.now();
  const seen = await untilUsage(
    usageOf(key),
    (t) => t['browser/null/session_seconds'] !== undefined,
    'the expired session',
  );
  assert.deepEqual(Object.keys(seen), ['browser/null/session_seconds']);
  const seconds = seen['browser/null/session_seconds']!;
  assert.ok(
    seconds >= IDLE_TIMEOUT_MS / 1000 && seconds <= (expiredBy - session.createdAt) / 1000,
    `${seconds} s; idle timeout ${IDLE_TIMEOUT_MS / 1000} s, expiry seen ${(expiredBy - session.createdAt) / 1000} s after creation`,
  );
  const details = await fetch(`${stack.gateway.url}/api/browser/session/${session.id}/details`, {
    headers: bearer(key.key),
  });
  assert.equal(((await details.json()) as { status: string }).status, 'expired');
});
