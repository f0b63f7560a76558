import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { connect as tcpConnect, createServer as createTcpServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as natsConnect, type NatsConnection } from 'nats';
import WebSocket from 'ws';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startBoundsSite, type BoundsSite } from '../support/bounds-site.js';
import { chromiumPids, startBrowserStack, type BrowserStack } from '../support/browser-stack.js';
import { cdpClient, type CdpClient, type CdpReply } from '../support/cdp-client.js';
import { errorOf } from '../support/stack.js';

/**
 * What these tests set; the DevTools and tab bounds are left at their defaults. The memory limit
 * leaves room for the tab test's ten tabs (about 450 MB as measured here); the hog pages stop at
 * 2 GB whatever happens, so a bound that fails fails its test, not the machine.
 */
const SESSION_MEMORY_MB = 768;
const RENDERER_HEAP_MB = 128;
const DEFAULT_MAX_DEVTOOLS_CONNECTIONS = 8;
const DEFAULT_MAX_TABS = 10;

interface SessionCreated {
  session_id: string;
  devtools_url: string;
}

/** Calls on one stack's gateway with one key. */
function browserApi(stack: BrowserStack, key: CreatedKey) {
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.gateway.url}/api/browser/session${path}`, {
      method,
      headers: { ...bearer(key.key), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    call,
    async create(): Promise<SessionCreated> {
      const res = await call('POST', '/create');
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as SessionCreated;
    },
    async navigate(id: string, url: string): Promise<Response> {
      return call('POST', `/${id}/navigate`, { url });
    },
    async details(id: string): Promise<{ status: string; end_reason: string | null }> {
      const res = await call('GET', `/${id}/details`);
      assert.equal(res.status, 200);
      return (await res.json()) as { status: string; end_reason: string | null };
    },
  };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string) {
  for (const end = Date.now() + timeoutMs; Date.now() < end;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`not in ${timeoutMs} ms: ${what}`);
}

/** The address-guard proxy of one of the stack's browsers, read from Chromium's command line. */
async function guardProxyPort(stack: BrowserStack): Promise<number> {
  for (const pid of await chromiumPids(stack.profileRoot)) {
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    const port = /--proxy-server=http:\/\/127\.0\.0\.1:(\d+)/.exec(cmdline)?.[1];
    if (port) return Number(port);
  }
  throw new Error('no browser of this stack is running');
}

/** A CONNECT through the proxy: the response head, the body of a refusal, and the socket. */
async function connectThrough(proxyPort: number, authority: string) {
  const socket = tcpConnect(proxyPort, '127.0.0.1');
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  let received = Buffer.alloc(0);
  while (!received.includes('\r\n\r\n')) {
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    received = Buffer.concat([received, chunk]);
  }
  const end = received.indexOf('\r\n\r\n');
  return { socket, head: received.subarray(0, end).toString('latin1'), rest: received.subarray(end + 4) };
}

/** Opens a DevTools WebSocket through the gateway: open, or refused with a status and body. */
function openDevtools(url: string, key: string) {
  return new Promise<{ ws: WebSocket } | { status: number; body: string }>((resolve, reject) => {
    const ws = new WebSocket(url, { headers: bearer(key), perMessageDeflate: false });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      ws.on('error', () => undefined);
    });
    ws.once('error', reject);
  });
}

/**
 * Waits until the page behind a flattened CDP session has loaded a page of `origin`: a new tab
 * is a complete about:blank before its navigation commits, and evaluate fails in between.
 */
async function loaded(client: CdpClient, sessionId: string, origin: string): Promise<void> {
  await eventually(
    async () => {
      const reply = await client.send(
        'Runtime.evaluate',
        {
          expression: `location.origin === ${JSON.stringify(origin)} && document.readyState === 'complete'`,
          returnByValue: true,
        },
        sessionId,
      );
      return (reply.result?.result as { value?: boolean } | undefined)?.value === true;
    },
    10_000,
    `a page of ${origin} loaded`,
  );
}

const refusedBySwitchboard = (reply: CdpReply) =>
  reply.error?.code === -32000 && reply.error.message.startsWith('Refused by Switchboard: ');

describe('bounded browser sessions', { timeout: 300_000 }, () => {
  let site: BoundsSite;
  let stack: BrowserStack;
  let owner: CreatedKey;
  let api: ReturnType<typeof browserApi>;
  let nats: NatsConnection;
  const events: { subject: string; body: Record<string, unknown> }[] = [];

  before(async () => {
    site = await startBoundsSite();
    stack = await startBrowserStack({
      workerEnv: {
        // Only this file's site, and a public-looking name for the port checks.
        BROWSER_ALLOWED_HOSTS: site.host,
        BROWSER_SESSION_MEMORY_MB: String(SESSION_MEMORY_MB),
        BROWSER_RENDERER_HEAP_MB: String(RENDERER_HEAP_MB),
      },
    });
    owner = await createKey(stack.gateway, { tier: 'enterprise' });
    api = browserApi(stack, owner);
    nats = await natsConnect(stack.nats.connectOptions('operator'));
    const sub = nats.subscribe('switchboard.events.browser.session.>');
    void (async () => {
      for await (const message of sub) {
        events.push({
          subject: message.subject,
          body: JSON.parse(message.string()) as Record<string, unknown>,
        });
      }
    })();
    await nats.flush();
  });
  after(async () => {
    await nats?.drain();
    await stack?.stop();
    await site?.stop();
  });

  /** The worker still serves: the session navigates and captures, and a new session starts. */
  const stillServes = async (id: string) => {
    const nav = await api.navigate(id, `${site.origin}/still-here`);
    assert.equal(nav.status, 200, await nav.clone().text());
    assert.equal(((await nav.json()) as { title: string }).title, 'Hello from /still-here');
    assert.equal((await api.call('POST', `/${id}/capture`)).status, 200);
    assert.equal(stack.workers[0]!.child.exitCode, null, 'the worker is still running');
  };

  it('a page that allocates without end closes its own session (memory_limit); the worker and a neighbour go on', async () => {
    const neighbour = await api.create();
    assert.equal((await api.navigate(neighbour.session_id, `${site.origin}/neighbour`)).status, 200);
    const hog = await api.create();
    const started = Date.now();
    const nav = await api.navigate(hog.session_id, `${site.origin}/hog/buffers`);
    assert.equal(nav.status, 200, await nav.clone().text());

    await eventually(
      async () => (await api.details(hog.session_id)).status !== 'active',
      20_000,
      'the session using more than its memory limit ended',
    );
    const details = await api.details(hog.session_id);
    assert.equal(details.status, 'closed');
    assert.equal(details.end_reason, 'memory_limit');
    const refused = await api.call('POST', `/${hog.session_id}/capture`);
    assert.equal(refused.status, 410);
    const error = await errorOf(refused);
    assert.equal(error.code, 'session_closed');
    assert.match(error.message, /end_reason: memory_limit/);
    await eventually(
      () =>
        events.some(
          (e) =>
            e.subject === 'switchboard.events.browser.session.closed' &&
            e.body.session_id === hog.session_id &&
            e.body.reason === 'memory_limit' &&
            e.body.key_id === owner.id,
        ),
      5_000,
      'browser.session.closed published with reason memory_limit',
    );
    assert.ok(Date.now() - started < 20_000);
    assert.equal(
      await stack.workers[0]!.metric('browser_sessions_ended_total', { reason: 'memory_limit' }),
      1,
    );

    await stillServes(neighbour.session_id);
    const next = await api.create();
    await stillServes(next.session_id);
    for (const id of [neighbour.session_id, next.session_id]) await api.call('POST', `/${id}/close`);
  });

  it("a page whose JavaScript heap passes the renderer's limit crashes, which closes its session (page_crashed)", async () => {
    const neighbour = await api.create();
    const hog = await api.create();
    const nav = await api.navigate(hog.session_id, `${site.origin}/hog/heap`);
    assert.equal(nav.status, 200, await nav.clone().text());
    await eventually(
      async () => (await api.details(hog.session_id)).status !== 'active',
      20_000,
      'the session whose page ran out of heap ended',
    );
    const details = await api.details(hog.session_id);
    assert.equal(details.status, 'closed');
    // Under the session's memory limit: the renderer's own heap limit ended it, not the watch.
    assert.equal(details.end_reason, 'page_crashed');
    await eventually(
      () => events.some((e) => e.body.session_id === hog.session_id && e.body.reason === 'page_crashed'),
      5_000,
      'browser.session.closed published with reason page_crashed',
    );
    await stillServes(neighbour.session_id);
    await api.call('POST', `/${neighbour.session_id}/close`);
  });

  it('refuses the DevTools socket past the bound with 429 rate_limited; open sockets keep answering', async () => {
    const { session_id, devtools_url } = await api.create();
    // The attack: many sockets at once, on one session.
    const attempts = await Promise.all(
      Array.from({ length: 20 }, () => openDevtools(devtools_url, owner.key)),
    );
    const open = attempts.flatMap((a) => ('ws' in a ? [a.ws] : []));
    const refused = attempts.flatMap((a) => ('status' in a ? [a] : []));
    try {
      assert.equal(open.length, DEFAULT_MAX_DEVTOOLS_CONNECTIONS);
      assert.equal(refused.length, 20 - DEFAULT_MAX_DEVTOOLS_CONNECTIONS);
      for (const r of refused) {
        assert.equal(r.status, 429);
        const body = JSON.parse(r.body) as { error: { code: string; message: string; request_id?: string } };
        assert.equal(body.error.code, 'rate_limited');
        assert.match(body.error.message, /DevTools connections/);
        assert.ok(body.error.request_id, 'the error carries the request id');
      }
      // Every open socket still answers.
      await Promise.all(
        open.map(async (ws, i) => {
          const reply = once(ws, 'message');
          ws.send(JSON.stringify({ id: i + 1, method: 'Browser.getVersion' }));
          const [data] = (await reply) as [Buffer];
          assert.ok((JSON.parse(data.toString()) as CdpReply).result?.product);
        }),
      );
      // A closed socket gives its place back.
      open.pop()!.close();
      await eventually(
        async () => {
          const again = await openDevtools(devtools_url, owner.key);
          if (!('ws' in again)) return false;
          open.push(again.ws);
          return true;
        },
        5_000,
        'a place freed by a closed socket is taken again',
      );
      const extra = await openDevtools(devtools_url, owner.key);
      assert.ok('status' in extra && extra.status === 429, 'still bounded');
      await stillServes(session_id);
    } finally {
      for (const ws of open) ws.close();
    }
    await api.call('POST', `/${session_id}/close`);
  });

  it('refuses Target.createTarget past the tab bound with a CDP error, and closes tabs a page opens past it', async () => {
    const { session_id, devtools_url } = await api.create();
    const clients: CdpClient[] = [];
    try {
      clients.push(await cdpClient(devtools_url, bearer(owner.key)));
      clients.push(await cdpClient(devtools_url, bearer(owner.key)));
      // The attack: 40 tabs at once, over two sockets.
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          clients[i % 2]!.send('Target.createTarget', { url: `${site.origin}/tab-${i}` }),
        ),
      );
      const created = replies.filter((r) => typeof r.result?.targetId === 'string');
      const refused = replies.filter(refusedBySwitchboard);
      // The session's own page is one of its tabs.
      assert.equal(created.length, DEFAULT_MAX_TABS - 1);
      assert.equal(refused.length, 40 - created.length);
      assert.match(refused[0]!.error!.message, /tabs open, the most it may have/);

      const [client] = clients as [CdpClient];
      const tabs = async () =>
        (
          (await client.send('Target.getTargets')).result!.targetInfos as { type: string; url: string }[]
        ).filter((t) => t.type === 'page' && !t.url.startsWith('chrome://'));
      assert.equal((await tabs()).length, DEFAULT_MAX_TABS);

      // A tab a page opens past the bound is closed at once.
      const opener = created[0]!.result!.targetId as string;
      const attached = await client.send('Target.attachToTarget', { targetId: opener, flatten: true });
      const pageSession = attached.result!.sessionId as string;
      await loaded(client, pageSession, site.origin);
      const opened = await client.send(
        'Runtime.evaluate',
        {
          expression: `new Promise((resolve) => { const w = window.open('/popup'); setTimeout(() => resolve({ opened: w !== null, closed: w?.closed }), 1500); })`,
          awaitPromise: true,
          userGesture: true,
          returnByValue: true,
        },
        pageSession,
      );
      assert.deepEqual(
        (opened.result?.result as { value?: unknown } | undefined)?.value,
        { opened: true, closed: true },
        JSON.stringify(opened),
      );
      assert.equal((await tabs()).length, DEFAULT_MAX_TABS);

      // The session keeps working, and a closed tab frees a place.
      assert.deepEqual((await client.send('Target.closeTarget', { targetId: opener })).result, {
        success: true,
      });
      await eventually(async () => (await tabs()).length === DEFAULT_MAX_TABS - 1, 5_000, 'the tab closed');
      // The guard frees the place when Chromium reports the tab destroyed, which can come a moment
      // after getTargets stops listing it.
      await eventually(
        async () =>
          typeof (await client.send('Target.createTarget', { url: 'about:blank' })).result?.targetId ===
          'string',
        5_000,
        'a closed tab frees its place',
      );
      assert.ok(refusedBySwitchboard(await client.send('Target.createTarget', { url: 'about:blank' })));
      await stillServes(session_id);
    } finally {
      for (const client of clients) client.close();
    }
    await api.call('POST', `/${session_id}/close`);
  });

  it('refuses service workers in the default context and in a context a DevTools client creates', async () => {
    const { session_id, devtools_url } = await api.create();
    const client = await cdpClient(devtools_url, bearer(owner.key));
    const registration = async (sessionId: string) => {
      const reply = await client.send(
        'Runtime.evaluate',
        {
          // The page's own attempt, then one that goes around any override of `register`.
          expression: `(async () => [
            await window.swResult,
            await ServiceWorkerContainer.prototype.register
              .call(navigator.serviceWorker, '/sw/worker.js?again')
              .then(() => 'registered', (e) => 'failed: ' + e.message),
            (await navigator.serviceWorker.getRegistrations()).length,
          ])()`,
          awaitPromise: true,
          returnByValue: true,
        },
        sessionId,
      );
      return (reply.result!.result as { value: [string, string, number] }).value;
    };
    try {
      // The session's own page, in the default context.
      assert.equal((await api.navigate(session_id, `${site.origin}/sw/page`)).status, 200);
      const targets = (await client.send('Target.getTargets')).result!.targetInfos as {
        targetId: string;
        url: string;
      }[];
      const own = targets.find((t) => t.url === `${site.origin}/sw/page`)!;
      const ownSession = (
        await client.send('Target.attachToTarget', { targetId: own.targetId, flatten: true })
      ).result!.sessionId as string;
      const [first, again, count] = await registration(ownSession);
      assert.match(first, /^failed: /);
      assert.match(again, /^failed: /);
      assert.equal(count, 0);

      // A context the client creates, where no script of the worker's ever ran.
      const context = await client.send('Target.createBrowserContext', {});
      const browserContextId = context.result!.browserContextId as string;
      const tab = await client.send('Target.createTarget', {
        url: `${site.origin}/sw/page`,
        browserContextId,
      });
      const tabSession = (
        await client.send('Target.attachToTarget', { targetId: tab.result!.targetId, flatten: true })
      ).result!.sessionId as string;
      await loaded(client, tabSession, site.origin);
      const [inContext, againInContext, countInContext] = await registration(tabSession);
      assert.match(inContext, /^failed: /);
      assert.match(againInContext, /^failed: /);
      assert.equal(countInContext, 0);

      assert.ok(site.requests.includes('/sw/page'));
      assert.ok(!site.requests.includes('/sw/worker.js'), 'no service worker script ever left the browser');
    } finally {
      client.close();
    }
    await api.call('POST', `/${session_id}/close`);
  });

  it('connects only to ports 80 and 443: port 25 of an allowed host is refused by the proxy, navigate and DevTools', async () => {
    const { session_id, devtools_url } = await api.create();
    // public.example resolves to a public address: only its port is wrong.
    const nav = await api.navigate(session_id, 'http://public.example:25/');
    assert.equal(nav.status, 400);
    const error = await errorOf(nav);
    assert.equal(error.code, 'url_not_allowed');
    assert.match(error.message, /Port 25/);

    const client = await cdpClient(devtools_url, bearer(owner.key));
    try {
      const refused = await client.send('Target.createTarget', { url: 'http://public.example:25/' });
      assert.ok(refusedBySwitchboard(refused), JSON.stringify(refused));
    } finally {
      client.close();
    }

    const proxyPort = await guardProxyPort(stack);
    for (const authority of ['public.example:25', '93.184.215.14:25']) {
      const { socket, head, rest } = await connectThrough(proxyPort, authority);
      assert.match(head, /^HTTP\/1\.1 403 /, authority);
      assert.match(head, /\r\nx-switchboard-guard: blocked\r\n/i);
      assert.equal(rest.toString(), 'port not allowed by the address guard');
      socket.destroy();
    }
    await api.call('POST', `/${session_id}/close`);
  });
});

describe('BROWSER_ALLOWED_PORTS opens more ports', { timeout: 120_000 }, () => {
  let stack: BrowserStack;
  let echo: Server;
  let echoPort: number;

  before(async () => {
    echo = createTcpServer((socket: Socket) => {
      socket.on('error', () => undefined);
      socket.pipe(socket);
    });
    echo.listen(0, '127.0.0.1');
    await once(echo, 'listening');
    echoPort = (echo.address() as AddressInfo).port;
    stack = await startBrowserStack({
      workerEnv: {
        // The host's address is exempt, on whatever ports the guard allows.
        BROWSER_ALLOWED_HOSTS: 'public-looking.example',
        BROWSER_ALLOWED_PORTS: `25,${echoPort}`,
      },
    });
  });
  after(async () => {
    await stack?.stop();
    echo?.close();
  });

  it('tunnels to an operator port, and lets port 25 through to the connection attempt', async () => {
    const proxyPort = await guardProxyPort(stack);
    const tunnel = await connectThrough(proxyPort, `public-looking.example:${echoPort}`);
    try {
      assert.match(tunnel.head, /^HTTP\/1\.1 200 /);
      tunnel.socket.write('EHLO switchboard');
      const [echoed] = (await once(tunnel.socket, 'data')) as [Buffer];
      assert.equal(echoed.toString(), 'EHLO switchboard');
    } finally {
      tunnel.socket.destroy();
    }
    // Nothing listens on port 25 here (or something does): the guard let it through either way.
    const smtp = await connectThrough(proxyPort, 'public-looking.example:25');
    assert.match(smtp.head, /^HTTP\/1\.1 (200|502) /);
    assert.doesNotMatch(smtp.head, /x-switchboard-guard: blocked/i);
    smtp.socket.destroy();
  });
});
