import { createServer, type Server } from 'node:http';
import { listenOnLoopback, type TestSite } from './test-site.js';

/** Every request's path is recorded in `requests`, oldest first. */
export type BoundsSite = TestSite;

const page = (title: string, script = '') =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body><h1>${title}</h1><script>${script}</script></body></html>`;

/**
 * Allocates `chunkMb` more every 50 ms once the page has loaded (so its navigate answers first),
 * and stops at `capMb` whatever happens: a bound that fails must fail the test, not the machine.
 * Array buffers live outside V8's heap, so only the worker's memory bound stops them; plain arrays
 * live in it, so the renderer heap limit stops them first.
 */
function hogScript(kind: 'buffers' | 'heap', chunkMb: number, capMb: number): string {
  const grow =
    kind === 'buffers'
      ? `const b = new Uint8Array(${chunkMb} * 1048576); b.fill(7); kept.push(b);`
      : `for (let i = 0; i < ${chunkMb * 16}; i++) kept.push(new Array(8192).fill(Math.random()));`;
  return (
    `window.kept = []; let grown = 0;` +
    `addEventListener('load', () => setTimeout(() => { const t = setInterval(() => {` +
    `if (grown >= ${capMb}) return clearInterval(t); const kept = window.kept; ${grow} grown += ${chunkMb};` +
    `}, 50); }, 300));`
  );
}

/**
 * The pages a session is pushed against its bounds with: memory hogs, and a page that registers a
 * service worker (its result in `window.swResult`).
 */
export async function startBoundsSite(): Promise<BoundsSite> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    requests.push(url.pathname);
    const html = (body: string) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    switch (url.pathname) {
      case '/hog/buffers':
        return html(page('Buffers', hogScript('buffers', 32, 2048)));
      case '/hog/heap':
        return html(page('Heap', hogScript('heap', 16, 1024)));
      case '/sw/page':
        return html(
          page(
            'Service worker',
            "window.swResult = navigator.serviceWorker.register('/sw/worker.js')" +
              ".then(() => 'registered', (e) => 'failed: ' + e.message);",
          ),
        );
      case '/sw/worker.js':
        res.writeHead(200, { 'content-type': 'text/javascript' });
        return res.end("self.addEventListener('fetch', (event) => event.respondWith(fetch(event.request)));");
      default:
        return html(page(`Hello from ${url.pathname.replace(/[^a-z0-9/-]/gi, '')}`));
    }
  });
  return listenOnLoopback(server, requests);
}
