import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { createLogger } from '@switchboard/telemetry';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import { AllowedHosts, AllowedPorts, dnsServerResolver, type HostResolver } from '@switchboard/address-guard';
import { startForwardProxy, type BlockedInfo, type ForwardProxy } from './forward-proxy.js';

const logger = createLogger({ service: 'guard-test', level: 'silent' });

/** A page server on loopback that records what reaches it. */
interface Target {
  port: number;
  connections: number;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  upgrades: IncomingHttpHeaders[];
  server: Server;
}

async function startTarget(): Promise<Target> {
  const server = createServer();
  const target: Target = { port: 0, connections: 0, requests: [], upgrades: [], server };
  server.on('connection', () => (target.connections += 1));
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      target.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      res.setHeader('x-from-target', 'yes');
      res.end(`echo:${body}`);
    });
  });
  server.on('upgrade', (req, socket: Socket) => {
    target.upgrades.push(req.headers);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  target.port = (server.address() as { port: number }).port;
  return target;
}

/** A TCP echo server, the far end of CONNECT tunnels. */
async function startEcho(): Promise<{ port: number; sockets: Socket[]; server: TcpServer }> {
  const sockets: Socket[] = [];
  const server = createTcpServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, sockets, server };
}

async function closedPort(): Promise<number> {
  const server = createTcpServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Harness {
  proxy: ForwardProxy;
  blocked: BlockedInfo[];
  activity: () => number;
}

async function withProxy(
  allowList: string[],
  run: (harness: Harness) => Promise<void>,
  allowedPorts: string[] = [],
): Promise<void> {
  const blocked: BlockedInfo[] = [];
  let activity = 0;
  const proxy = await startForwardProxy({
    allowed: AllowedHosts.parse(allowList, AllowedPorts.parse(allowedPorts)),
    resolver,
    logger,
    connectTimeoutMs: 2000,
    onBlocked: (info) => blocked.push(info),
    onActivity: () => (activity += 1),
  });
  try {
    await run({ proxy, blocked, activity: () => activity });
  } finally {
    await proxy.close();
  }
}

interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
  localPort: number | undefined;
}

/** A request in absolute form, as a browser sends it to its proxy. */
function viaProxy(
  proxyPort: number,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string[]; agent?: Agent } = {},
): Promise<ProxiedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: proxyPort,
        path: url,
        method: options.method ?? 'GET',
        headers: options.headers,
        agent: options.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
            reusedSocket: req.reusedSocket,
            localPort: res.socket?.localPort,
          }),
        );
      },
    );
    req.on('error', reject);
    for (const chunk of options.body ?? []) req.write(chunk);
    req.end();
  });
}

/** Sends raw bytes to the proxy and reads the response head; the socket stays open for more. */
function rawExchange(port: number, text: string): Promise<{ socket: Socket; head: string; rest: Buffer }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      socket.pause();
      resolve({
        socket,
        head: buffered.subarray(0, end).toString('latin1'),
        rest: buffered.subarray(end + 4),
      });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('connect', () => socket.write(text));
  });
}

function nextData(socket: Socket): Promise<string> {
  return new Promise((resolve) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString()));
    socket.resume();
  });
}

function ended(socket: Socket): Promise<unknown> {
  return socket.destroyed ? Promise.resolve() : once(socket, 'close');
}

let dnsServer: DnsServer;
let resolver: HostResolver;
let target: Target;
let echo: Awaited<ReturnType<typeof startEcho>>;

before(async () => {
  dnsServer = await startDnsServer({ 'public-looking.example': ['127.0.0.1'], 'ten.example': ['10.0.0.1'] });
  resolver = dnsServerResolver([dnsServer.address], { timeoutMs: 1000, tries: 1 });
  target = await startTarget();
  echo = await startEcho();
});

after(async () => {
  target.server.closeAllConnections();
  await Promise.all([
    dnsServer.close(),
    new Promise((resolve) => target.server.close(resolve)),
    new Promise((resolve) => echo.server.close(resolve)),
  ]);
});

function reset(): void {
  target.connections = 0;
  target.requests.length = 0;
  target.upgrades.length = 0;
  echo.sockets.length = 0;
}

test('an allow-listed target is reached; keep-alive to the proxy reuses one socket', () =>
  withProxy([`127.0.0.1:${target.port}`], async ({ proxy, activity }) => {
    reset();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const base = `http://127.0.0.1:${target.port}`;
      const first = await viaProxy(proxy.port, `${base}/hello?x=1`, {
        agent,
        headers: {
          'proxy-authorization': 'Basic c2VjcmV0',
          'proxy-connection': 'keep-alive',
          connection: 'keep-alive, x-hop',
          'x-hop': 'drop me',
          'x-end': 'keep me',
        },
      });
      assert.equal(first.status, 200);
      assert.equal(first.body, 'echo:');
      assert.equal(first.headers['x-from-target'], 'yes');
      assert.equal(first.reusedSocket, false);

      const second = await viaProxy(proxy.port, `${base}/upload`, {
        agent,
        method: 'POST',
        body: ['part1-', 'part2'],
      });
      assert.equal(second.status, 200);
      assert.equal(second.body, 'echo:part1-part2', 'a chunked body streams through');
      assert.equal(second.reusedSocket, true, 'the second request went over the same proxy connection');
      assert.equal(second.localPort, first.localPort);

      const [seenFirst, seenSecond] = target.requests;
      assert.equal(seenFirst?.method, 'GET');
      assert.equal(seenFirst?.url, '/hello?x=1', 'origin-form path with the query');
      assert.equal(seenFirst?.headers.host, `127.0.0.1:${target.port}`);
      assert.equal(seenFirst?.headers['x-end'], 'keep me');
      for (const dropped of ['proxy-authorization', 'proxy-connection', 'x-hop']) {
        assert.equal(seenFirst?.headers[dropped], undefined, dropped);
      }
      assert.equal(seenSecond?.method, 'POST');
      assert.equal(target.connections, 1, 'upstream keep-alive to the checked address');
      assert.equal(activity(), 2);
    } finally {
      agent.destroy();
    }
  }));

test('a loopback target that is not allow-listed is refused before any connection', () =>
  withProxy([], async ({ proxy, blocked }) => {
    reset();
    const response = await viaProxy(proxy.port, `http://127.0.0.1:${target.port}/secret?token=x`);
    assert.equal(response.status, 403);
    assert.equal(response.headers['x-switchboard-guard'], 'blocked');
    assert.equal(response.body, 'blocked by the address guard');
    assert.equal(target.connections, 0);
    assert.equal(target.requests.length, 0);
    assert.deepEqual(blocked, [{ host: '127.0.0.1', port: target.port, reason: 'loopback' }]);

    const numeric = await viaProxy(proxy.port, `http://2130706433:${target.port}/`);
    assert.equal(numeric.status, 403);
    const ftp = await viaProxy(proxy.port, 'ftp://example.com/file');
    assert.equal(ftp.status, 403);
    assert.equal(blocked.at(-1)?.reason, 'scheme');
    assert.equal(target.connections, 0);
  }));

test('a public-looking name that resolves to loopback is refused; allow-listed, it reaches that address', async () => {
  await withProxy([], async ({ proxy, blocked }) => {
    reset();
    const response = await viaProxy(proxy.port, `http://public-looking.example:${target.port}/`);
    assert.equal(response.status, 403);
    assert.equal(response.headers['x-switchboard-guard'], 'blocked');
    assert.equal(target.connections, 0);
    assert.deepEqual(blocked, [{ host: 'public-looking.example', port: target.port, reason: 'loopback' }]);
  });
  await withProxy([`public-looking.example:${target.port}`], async ({ proxy }) => {
    reset();
    const response = await viaProxy(proxy.port, `http://Public-Looking.example:${target.port}/named`);
    assert.equal(response.status, 200);
    assert.equal(target.requests[0]?.headers.host, `public-looking.example:${target.port}`);
  });
});

test('a name that does not resolve is 502 dns_failed', () =>
  withProxy([], async ({ proxy }) => {
    const response = await viaProxy(proxy.port, 'http://nowhere.example/');
    assert.equal(response.status, 502);
    assert.equal(response.headers['x-switchboard-guard'], 'dns_failed');
  }));

test('a refused connection is 502 connect_failed', async () => {
  const port = await closedPort();
  await withProxy([`127.0.0.1:${port}`], async ({ proxy }) => {
    const response = await viaProxy(proxy.port, `http://127.0.0.1:${port}/`);
    assert.equal(response.status, 502);
    assert.equal(response.headers['x-switchboard-guard'], 'connect_failed');
  });
});

test('an origin-form request is not a proxy request', () =>
  withProxy([], async ({ proxy }) => {
    const response = await viaProxy(proxy.port, '/just-a-path');
    assert.equal(response.status, 400);
    assert.equal(response.headers['x-switchboard-guard'], undefined);
  }));

test('CONNECT to an allow-listed target opens a tunnel that carries bytes', () =>
  withProxy([`127.0.0.1:${echo.port}`], async ({ proxy, activity }) => {
    reset();
    const { socket, head } = await rawExchange(
      proxy.port,
      `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\nHost: 127.0.0.1:${echo.port}\r\n\r\n`,
    );
    try {
      assert.match(head, /^HTTP\/1\.1 200 /);
      socket.write('ping');
      assert.equal(await nextData(socket), 'ping');
      assert.equal(activity(), 1);
    } finally {
      socket.destroy();
    }
  }));

test('CONNECT to a blocked target is 403 and closed, with nothing dialled', () =>
  withProxy([], async ({ proxy, blocked }) => {
    reset();
    for (const authority of [
      `127.0.0.1:${echo.port}`,
      `[::1]:${echo.port}`,
      `public-looking.example:${echo.port}`,
    ]) {
      const { socket, head } = await rawExchange(
        proxy.port,
        `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
      );
      assert.match(head, /^HTTP\/1\.1 403 /, authority);
      assert.match(head, /\r\nx-switchboard-guard: blocked\r\n/i);
      socket.resume();
      await ended(socket);
    }
    assert.equal(echo.sockets.length, 0);
    assert.deepEqual(
      blocked.map((info) => info.reason),
      ['loopback', 'loopback', 'loopback'],
    );

    const { socket, head } = await rawExchange(proxy.port, 'CONNECT nowhere.example:443 HTTP/1.1\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 502 /);
    assert.match(head, /\r\nx-switchboard-guard: dns_failed\r\n/i);
    socket.destroy();
  }));

test('CONNECT and requests to a port that is not allowed are 403, on an allowed host too; BROWSER_ALLOWED_PORTS opens it', async () => {
  // The host's address is exempt (no port in the entry); its ports are the guard's: 80 and 443.
  await withProxy(['public-looking.example'], async ({ proxy, blocked }) => {
    reset();
    const { socket, head, rest } = await rawExchange(
      proxy.port,
      `CONNECT public-looking.example:${echo.port} HTTP/1.1\r\nHost: public-looking.example:${echo.port}\r\n\r\n`,
    );
    assert.match(head, /^HTTP\/1\.1 403 /);
    assert.match(head, /\r\nx-switchboard-guard: blocked\r\n/i);
    socket.resume();
    await ended(socket);
    assert.equal(rest.toString(), 'port not allowed by the address guard');
    const plain = await viaProxy(proxy.port, `http://public-looking.example:${target.port}/`);
    assert.equal(plain.status, 403);
    assert.equal(plain.body, 'port not allowed by the address guard');
    assert.equal(echo.sockets.length + target.connections, 0, 'nothing dialled');
    assert.deepEqual(
      blocked.map((info) => info.reason),
      ['port', 'port'],
    );
  });
  await withProxy(
    ['public-looking.example'],
    async ({ proxy }) => {
      reset();
      const { socket, head } = await rawExchange(
        proxy.port,
        `CONNECT public-looking.example:${echo.port} HTTP/1.1\r\nHost: public-looking.example:${echo.port}\r\n\r\n`,
      );
      try {
        assert.match(head, /^HTTP\/1\.1 200 /);
        socket.write('helo');
        assert.equal(await nextData(socket), 'helo');
      } finally {
        socket.destroy();
      }
    },
    [String(echo.port)],
  );
});

test('a plain ws:// Upgrade through the proxy is checked, then tunnelled', async () => {
  const upgrade = (port: number): string =>
    `GET http://127.0.0.1:${port}/chat HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\n` +
    'Upgrade: websocket\r\nProxy-Connection: keep-alive\r\n\r\n';
  await withProxy([], async ({ proxy }) => {
    reset();
    const { socket, head } = await rawExchange(proxy.port, upgrade(target.port));
    assert.match(head, /^HTTP\/1\.1 403 /);
    socket.destroy();
    assert.equal(target.connections, 0);
  });
  await withProxy([`127.0.0.1:${target.port}`], async ({ proxy }) => {
    reset();
    const { socket, head } = await rawExchange(proxy.port, upgrade(target.port));
    try {
      assert.match(head, /^HTTP\/1\.1 101 /);
      socket.write('frame');
      assert.equal(await nextData(socket), 'frame');
      assert.equal(target.upgrades[0]?.upgrade, 'websocket');
      assert.equal(target.upgrades[0]?.['proxy-connection'], undefined);
    } finally {
      socket.destroy();
    }
  });
});

/** A TCP server whose every connection gets `greet`, for far ends that misbehave or talk first. */
async function startRaw(greet: (socket: Socket) => void): Promise<{ port: number; server: TcpServer }> {
  const server = createTcpServer((socket) => {
    socket.on('error', () => undefined);
    greet(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { port: (server.address() as { port: number }).port, server };
}

test('a malformed upstream response costs that request, not the proxy', async () => {
  const weird = await startRaw((socket) =>
    socket.once('data', () => socket.end('HTTP/1.1 099 Weird\r\nContent-Length: 0\r\n\r\n')),
  );
  try {
    await withProxy([`127.0.0.1:${weird.port}`, `127.0.0.1:${target.port}`], async ({ proxy }) => {
      const response = await viaProxy(proxy.port, `http://127.0.0.1:${weird.port}/`);
      assert.equal(response.status, 502);
      assert.equal(response.headers['x-switchboard-guard'], 'connect_failed');
      assert.equal((await viaProxy(proxy.port, `http://127.0.0.1:${target.port}/`)).status, 200);
    });
  } finally {
    weird.server.close();
  }
});

test('a tunnel whose far end sends and closes delivers every byte first', async () => {
  const payload = Buffer.alloc(4 * 1024 * 1024, 7);
  const talker = await startRaw((socket) => socket.end(payload));
  try {
    await withProxy([`127.0.0.1:${talker.port}`], async ({ proxy }) => {
      const { socket, rest } = await rawExchange(
        proxy.port,
        `CONNECT 127.0.0.1:${talker.port} HTTP/1.1\r\n\r\n`,
      );
      // Stay paused a moment so the bytes pile up in the proxy before the far end is gone.
      await new Promise((resolve) => setTimeout(resolve, 100));
      let received = rest.length;
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      await ended(socket);
      assert.equal(received, payload.length);
    });
  } finally {
    talker.server.close();
  }
});

test('close() ends open tunnels at both ends', async () => {
  reset();
  const proxy = await startForwardProxy({
    allowed: AllowedHosts.parse([`127.0.0.1:${echo.port}`]),
    resolver,
    logger,
  });
  const { socket } = await rawExchange(proxy.port, `CONNECT 127.0.0.1:${echo.port} HTTP/1.1\r\n\r\n`);
  socket.write('hello');
  assert.equal(await nextData(socket), 'hello');
  const far = echo.sockets[0];
  assert.ok(far);
  await proxy.close();
  await Promise.all([ended(socket), ended(far)]);
  assert.equal(await proxy.close(), undefined, 'closing twice is harmless');
});
