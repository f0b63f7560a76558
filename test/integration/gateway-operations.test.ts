import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey } from '../support/admin.js';
import { startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack?.stop());

test('probes, OpenAPI, docs and the dashboard page need no key', async () => {
  const health = await fetch(`${stack.gateway.url}/healthz`);
  assert.deepEqual(await health.json(), { status: 'ok' });
  const ready = await fetch(`${stack.gateway.url}/readyz`);
  assert.equal(((await ready.json()) as { status: string }).status, 'ready');

  const openapi = await fetch(`${stack.gateway.url}/openapi.json`);
  assert.equal(openapi.status, 200);
  const doc = (await openapi.json()) as { openapi: string; paths: Record<string, unknown> };
  assert.equal(doc.openapi, '3.1.0');
  for (const path of [
    '/query',
    '/models',
    '/transcribe',
    '/generate-image',
    '/animate',
    '/api/browser/session/create',
    '/admin/api/keys',
  ]) {
    assert.ok(doc.paths[path], `documents ${path}`);
  }

  for (const page of ['/docs', '/admin']) {
    const res = await fetch(`${stack.gateway.url}${page}`);
    assert.equal(res.status, 200, page);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    // Rendering in a browser is tested in gateway-docs-page and gateway-dashboard.
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/, `${page} runs only its own script files`);
  }
});

test('the admin status call reports every worker, unreachable while none runs', async () => {
  const res = await admin(stack.gateway, 'GET', '/status');
  assert.equal(res.status, 200);
  const status = (await res.json()) as {
    workers: { name: string; address: string; status: string; replicas: unknown[] }[];
    browser_sessions: unknown;
    animation_jobs: unknown;
  };
  assert.deepEqual(
    status.workers.map((w) => [w.name, w.status]),
    ['llm', 'whisper', 'diffusion', 'animation', 'browser'].map((name) => [name, 'UNREACHABLE']),
  );
  // A model worker at an IP address has that one replica, never reached and sent nothing; the
  // browser and animation workers list none.
  for (const worker of status.workers) {
    const replica = { address: worker.address, status: 'UNREACHABLE', in_flight: 0, served: 0 };
    const pooled = ['llm', 'whisper', 'diffusion'].includes(worker.name);
    assert.deepEqual(worker.replicas, pooled ? [replica] : [], worker.name);
  }
  // Sessions come from the registry every browser worker writes to: none yet.
  assert.deepEqual(status.browser_sessions, []);
  // Jobs come from JetStream, which answers with no animation worker running: none yet.
  assert.deepEqual(status.animation_jobs, []);
  assert.equal((await fetch(`${stack.gateway.url}/admin/api/status`)).status, 401);
});

test('metrics count requests by route template and rate-limit rejections', async () => {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 1 });
  await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) });
  assert.equal((await fetch(`${stack.gateway.url}/models`, { headers: bearer(key.key) })).status, 429);
  await fetch(`${stack.gateway.url}/api/browser/session/3b241101-e2bb-4255-8caf-4136c566a962/details`, {
    headers: bearer(key.key),
  });
  const metrics = await (await fetch(stack.gateway.metricsUrl)).text();
  assert.match(metrics, /switchboard_http_requests_total\{[^}]*route="\/models"[^}]*status="200"[^}]*\} 1/);
  assert.match(metrics, /switchboard_rate_limit_rejections_total\{[^}]*reason="key"[^}]*\} [1-9]/);
  assert.match(metrics, /switchboard_http_request_duration_seconds_bucket/);
  assert.ok(!metrics.includes('3b241101-e2bb'), 'ids never become label values');
});
