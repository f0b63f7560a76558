import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestSite {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** host:port, for BROWSER_ALLOWED_HOSTS. */
  host: string;
  /** Every path+query this server was asked for, oldest first. */
  requests: string[];
  stop(): Promise<void>;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

/**
 * The tests' own website on loopback: a form, the page it submits to, redirects, a page that
 * pulls sub-resources from a URL it is given, and a page that never finishes loading.
 */
export async function startTestSite(): Promise<TestSite> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://site');
    requests.push(`${url.pathname}${url.search}`);
    const html = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    switch (url.pathname) {
      case '/form':
        return html(
          200,
          page(
            'Sign up',
            '<form id="signup" action="/result" method="get">' +
              '<input id="name" name="name"><button id="go" type="submit">Go</button></form>',
          ),
        );
      case '/result':
        return html(
          200,
          page('Result', `<p id="out">Hello, ${escapeHtml(url.searchParams.get('name') ?? '')}</p>`),
        );
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/form' });
        return res.end();
      case '/embed': {
        const target = url.searchParams.get('target') ?? '';
        return html(
          200,
          page(
            'Embed',
            `<img src="${escapeHtml(target)}"><script>fetch(${JSON.stringify(target)}).catch(() => {})</script>`,
          ),
        );
      }
      case '/download':
        res.writeHead(200, {
          'content-type': 'application/octet-stream',
          'content-disposition': 'attachment; filename="download.bin"',
        });
        return res.end('a file a page asks the browser to save');
      case '/never':
        return; // headers never come: the navigation times out
      default:
        return html(200, page('Hello', `<h1>Hello from ${escapeHtml(url.pathname)}</h1>`));
    }
  });
  return listenOnLoopback(server, requests);
}

/** Starts a test website's server on a free loopback port, as a TestSite. */
export async function listenOnLoopback(server: Server, requests: string[]): Promise<TestSite> {
  server.keepAliveTimeout = 1000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
