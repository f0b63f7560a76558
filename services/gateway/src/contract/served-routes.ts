/**
 * The routes an Express app serves, read from its router stack, in OpenAPI form
 * (`GET /admin/api/keys/{id}`), so a test can compare them with the document both ways.
 */
import type { Express } from 'express';

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
