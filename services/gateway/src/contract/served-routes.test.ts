import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Express } from 'express';
import { loadGatewayConfig } from '../config.js';
import { openApiDocument } from '../contract/document.js';
import { createApp, type GatewayDeps } from '../server.js';

/**
 * The routes an Express app serves, read from its router stack, in OpenAPI form
 * (`GET /admin/api/keys/{id}`), so they can be compared with the document both ways.
 */
interface Layer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

function walk(stack: readonly Layer[], prefix: string, found: Set<string>): void {
  for (const layer of stack) {
    if (layer.route && typeof layer.route.path === 'string') {
      // A router's '/' mounted at '/admin' is the page '/admin' itself.
      const path = prefix !== '' && layer.route.path === '/' ? prefix : prefix + layer.route.path;
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') found.add(`${method.toUpperCase()} ${toOpenApiPath(path)}`);
      }
    } else if (layer.handle?.stack) {
      // A mounted router: `app.use('/admin', router)` keeps '/admin' as the layer's path.
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      walk(layer.handle.stack, prefix + mount, found);
    }
  }
}

/** `METHOD /path` for every route of the app (HEAD, which Express answers for GET, left out). */
export function servedRoutes(app: Express): Set<string> {
  const found = new Set<string>();
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '', found);
  return found;
}

/**
 * Building the app only wires routers; no dependency is called until a request arrives. This
 * object answers every property read and call with itself, so the real createApp can be built
 * without brokers or workers just to read its router.
 */
function inert(): never {
  const target = function () {};
  const proxy: unknown = new Proxy(target, {
    get: (_t, property) => (property === Symbol.toPrimitive ? () => '' : proxy),
    apply: () => proxy,
    construct: () => proxy as object,
  });
  return proxy as never;
}

function appRoutes(): Set<string> {
  const config = loadGatewayConfig({
    ADMIN_TOKEN: 'route-walk-admin-token-0123456789',
    CLUSTER_SECRET: 'route-walk-cluster-secret-0123456789',
    KEY_PEPPER: 'route-walk-key-pepper-0123456789abcdef',
  });
  const deps: GatewayDeps = {
    config,
    logger: inert(),
    keys: inert(),
    limiter: inert(),
    callPlaces: inert(),
    clients: inert(),
    events: inert(),
    metrics: inert(),
    readiness: inert(),
    nats: inert(),
    live: inert(),
    objects: inert(),
    usage: inert(),
  };
  return servedRoutes(createApp(deps));
}

function documentedRoutes(): Set<string> {
  const found = new Set<string>();
  for (const [path, item] of Object.entries(openApiDocument.paths ?? {})) {
    for (const method of Object.keys(item)) found.add(`${method.toUpperCase()} ${path}`);
  }
  return found;
}

test('every served route is documented, and every documented route is served', () => {
  const served = appRoutes();
  const documented = documentedRoutes();
  assert.ok(served.size > 25, `the walk found the routes (${[...served].join(', ')})`);
  assert.deepEqual(
    [...served].filter((route) => !documented.has(route)).sort(),
    [],
    'served but missing from the OpenAPI document',
  );
  assert.deepEqual(
    [...documented].filter((route) => !served.has(route)).sort(),
    [],
    'documented but not served',
  );
});

test('the walk sees through mounted routers and reads parameters in OpenAPI form', () => {
  const served = appRoutes();
  assert.ok(served.has('GET /admin/api/keys/{id}'), 'a route two routers deep, under /admin and /api');
  assert.ok(served.has('GET /api/videos/{job_id}.mp4'));
});
