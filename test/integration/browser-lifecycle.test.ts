import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { chromiumPids, startBrowserStack } from '../support/browser-stack.js';
import { DEFAULT_STALE_AFTER_MS } from '@switchboard/browser-registry';
import { testClusterSecret } from '../support/gateway.js';
import { errorOf, sleep } from '../support/stack.js';

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
  return Date.now() - started;
}

/** POSTs JSON to `/api/browser<path>` with the key. */
const browserPost =
  (gatewayUrl: string, key: string) =>
  (path: string, body: unknown = {}) =>
    fetch(`${gatewayUrl}/api/browser${path}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

describe('browser session lifecycle', { timeout: 300_000 }, () => {
  it('expires an idle session: its Chromium is gone within 5 s and its place is free again', async () => {
    const stack = await startBrowserStack({
      workerEnv: { BROWSER_IDLE_TIMEOUT_MS: '2000', BROWSER_MAX_SESSIONS: '1', BROWSER_POOL_SIZE: '0' },
    });
    try {
      const key = await createKey(stack.gateway, { tier: 'professional' });
      const post = browserPost(stack.gateway.url, key.key);
      const created = (await (await post('/session/create')).json()) as { session_id: string };
      const id = created.session_id;
      assert.ok((await chromiumPids(stack.profileRoot)).length > 0, 'the session runs a Chromium');
      // The worker is full: one session at most.
      const full = await post('/session/create');
      assert.equal(full.status, 503);
      assert.equal((await errorOf(full)).code, 'no_capacity');
      assert.ok(Number(full.headers.get('retry-after')) >= 1);

      // Activity keeps it alive past the timeout.
      for (let i = 0; i < 3; i++) {
        await sleep(1000);
        assert.equal(
          (await post(`/session/${id}/navigate`, { url: `${stack.site.origin}/form` })).status,
          200,
        );
      }
      // Watched from the worker's metrics: `details` is a call, so polling it would be activity.
      const worker = stack.workers[0]!;
      const expiredAfter = await waitFor(
        'expiry',
        async () => (await worker.metric('browser_sessions_ended_total', { reason: 'expired' })) === 1,
        10_000,
      );
      assert.ok(expiredAfter >= 1000, 'not before the idle timeout');
      await waitFor(
        'Chromium to exit',
        async () => (await chromiumPids(stack.profileRoot)).length === 0,
        5_000,
      );
      // The worker removes the profile folder once its Chromium has exited: a moment later.
      await waitFor(
        'the profile folder to be removed',
        async () => (await stack.profiles()).length === 0,
        5_000,
      );
      const details = await fetch(`${stack.gateway.url}/api/browser/session/${id}/details`, {
        headers: bearer(key.key),
      });
      assert.equal(((await details.json()) as { status: string }).status, 'expired');

      const action = await post(`/session/${id}/capture`);
      assert.equal(action.status, 410);
      assert.equal((await errorOf(action)).code, 'session_expired');
      const replacement = await post('/session/create');
      assert.equal(replacement.status, 201, await replacement.clone().text());
      await post(`/session/${((await replacement.json()) as { session_id: string }).session_id}/close`);
    } finally {
      await stack.stop();
    }
  });

  it('leaves no Chromium process and no profile directory after 50 create/close cycles', async () => {
    const stack = await startBrowserStack({ workerEnv: { BROWSER_POOL_SIZE: '2' } });
    try {
      const key = await createKey(stack.gateway, { tier: 'enterprise' });
      const post = (path: string) =>
        fetch(`${stack.gateway.url}/api/browser${path}`, { method: 'POST', headers: bearer(key.key) });
      for (let i = 0; i < 50; i++) {
        const created = await post('/session/create');
        assert.equal(created.status, 201, await created.clone().text());
        const { session_id: id } = (await created.json()) as { session_id: string };
        assert.equal((await post(`/session/${id}/close`)).status, 200);
      }
      // Only the warm pool is left while the worker runs, and nothing once it has stopped.
      await waitFor('the pool to settle', async () => (await stack.profiles()).length === 2, 10_000);
      // Time for a graceful stop even on a loaded machine: what is checked is the worker's own
      // clean-up on SIGTERM, which a SIGKILL after the default grace would cut short.
      await stack.workers[0]!.stop(30_000);
      await waitFor(
        'every Chromium to exit',
        async () => (await chromiumPids(stack.profileRoot)).length === 0,
        10_000,
      );
      assert.deepEqual(await stack.profiles(), []);
    } finally {
      await stack.stop();
    }
  });

  it('a late heartbeat ends no session: its worker is asked before the session is called expired', async () => {
    const stack = await startBrowserStack();
    try {
      const key = await createKey(stack.gateway, { tier: 'professional' });
      const post = browserPost(stack.gateway.url, key.key);
      const created = await post('/session/create');
      assert.equal(created.status, 201, await created.clone().text());
      const { session_id: id } = (await created.json()) as { session_id: string };
      // NATS frozen past the registry's staleness bound: no heartbeat reaches the gateway, while
      // the worker itself runs on.
      stack.nats.pause();
      try {
        await sleep(DEFAULT_STALE_AFTER_MS + 1000);
        const navigated = await post(`/session/${id}/navigate`, { url: `${stack.site.origin}/form` });
        assert.equal(navigated.status, 200, await navigated.clone().text());
        const details = await fetch(`${stack.gateway.url}/api/browser/session/${id}/details`, {
          headers: bearer(key.key),
        });
        assert.equal(((await details.json()) as { status: string }).status, 'active');
      } finally {
        stack.nats.resume();
      }
    } finally {
      await stack.stop();
    }
  });

  it('spreads sessions over two workers, routes calls to the owner, and survives one dying', async () => {
    const stack = await startBrowserStack({ workers: 2, workerEnv: { BROWSER_MAX_SESSIONS: '4' } });
    try {
      const key = await createKey(stack.gateway, { tier: 'enterprise' });
      const post = browserPost(stack.gateway.url, key.key);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await post('/session/create');
        assert.equal(res.status, 201, await res.clone().text());
        ids.push(((await res.json()) as { session_id: string }).session_id);
      }
      const perWorker = await Promise.all(stack.workers.map((w) => w.metric('browser_active_sessions')));
      assert.deepEqual(perWorker, [2, 2], 'new sessions go to the worker with the most free capacity');

      // Every call reaches the owner, wherever the session lives.
      for (const id of ids) {
        const res = await post(`/session/${id}/navigate`, { url: `${stack.site.origin}/hello-${id}` });
        assert.equal(res.status, 200, await res.clone().text());
      }

      // Which sessions does the first worker own? Its gRPC ListSessions knows.
      const { createClient, unary } = await import('@switchboard/grpc');
      const { Browser } = await import('@switchboard/contracts');
      const client = createClient(Browser, stack.workers[0]!.address, {
        deadlineMs: 5000,
        clusterSecret: testClusterSecret,
      });
      const owned = (await unary(client.ListSessions.bind(client), {})).sessions.map((s) => s.session_id);
      client.close();
      assert.equal(owned.length, 2);

      stack.workers[0]!.child.kill('SIGKILL');
      const started = Date.now();
      for (const id of ids) {
        const res = await post(`/session/${id}/navigate`, { url: `${stack.site.origin}/form` });
        if (owned.includes(id)) {
          assert.equal(res.status, 410, await res.clone().text());
          assert.equal((await errorOf(res)).code, 'session_expired');
          const details = await fetch(`${stack.gateway.url}/api/browser/session/${id}/details`, {
            headers: bearer(key.key),
          });
          assert.equal(((await details.json()) as { status: string }).status, 'expired');
        } else {
          assert.equal(res.status, 200, 'the other worker keeps serving its sessions');
        }
      }
      assert.ok(Date.now() - started < 10_000, 'the dead worker does not make calls hang');
      // New sessions now go to the survivor.
      const fresh = await post('/session/create');
      assert.equal(fresh.status, 201, await fresh.clone().text());
    } finally {
      await stack.stop();
    }
  });
});
