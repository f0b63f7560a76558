import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { AllowedHosts, AllowedPorts, dnsServerResolver } from '@switchboard/address-guard';
import { startDnsServer, type DnsServer } from '@switchboard/devcluster';
import {
  makeTestCertificates,
  SERVER_DNS_NAME,
  type TestCertificates,
} from '@switchboard/grpc/test-certificates';
import { postOnce, RESPONSE_BODY_LIMIT, type AttemptGuard } from './http-attempt.js';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A receiver on 127.0.0.1 whose answer each test sets; it counts connections and requests. */
class Receiver {
  readonly received: Received[] = [];
  connections = 0;
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok');
  private readonly sockets = new Set<Socket>();

  constructor(readonly server: http.Server) {
    server.on('connection', (socket: Socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString(),
        });
        this.handler(req, res);
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  reset(): void {
    this.received.length = 0;
    this.connections = 0;
    this.handler = (_req, res) => res.end('ok');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const plain = new Receiver(http.createServer());
let certificates: TestCertificates;
let secure: Receiver;
let port: number;
let securePort: number;
let dns: DnsServer;
let guard: AttemptGuard;
const headers = { 'content-type': 'application/json', 'webhook-id': 'evt_test' };
const body = '{"type":"webhook.test","timestamp":"2026-01-01T00:00:00.000Z","data":{}}';

before(async () => {
  certificates = makeTestCertificates();
  secure = new Receiver(
    https.createServer({
      cert: readFileSync(certificates.server.cert),
      key: readFileSync(certificates.server.key),
    }),
  );
  [port, securePort] = await Promise.all([plain.listen(), secure.listen()]);
  dns = await startDnsServer({
    'receiver.test': ['127.0.0.1'],
    'internal.example.com': ['127.0.0.1'],
    'mixed.example.com': ['93.184.216.34', '10.1.2.3'],
    [SERVER_DNS_NAME]: ['127.0.0.1'],
  });
  guard = {
    // 127.0.0.1 and receiver.test stand in for a receiver on the internet; nothing else is exempt.
    allowed: AllowedHosts.parse(['127.0.0.1', 'receiver.test', SERVER_DNS_NAME], AllowedPorts.any()),
    resolver: dnsServerResolver([dns.address]),
  };
});

after(async () => {
  await Promise.all([plain.close(), secure.close(), dns.close()]);
  certificates.remove();
});

describe('an attempt that reaches the endpoint', () => {
  test('a 2xx is an answer with its status and body; the request carries the body and headers', async () => {
    plain.reset();
    plain.handler = (_req, res) => res.writeHead(202).end('accepted');
    const result = await postOnce(`http://127.0.0.1:${port}/hooks?x=1`, body, headers, {
      guard,
      timeoutMs: 5_000,
    });
    assert.equal(result.kind, 'response');
    assert.equal(result.status, 202);
    assert.equal(result.body, 'accepted');
    assert.equal(result.error, null);
    assert.ok(result.ms >= 0);
    const [request] = plain.received;
    assert.equal(request?.path, '/hooks?x=1');
    assert.equal(request?.body, body);
    assert.equal(request?.headers['webhook-id'], 'evt_test');
    assert.equal(request?.headers['content-length'], String(Buffer.byteLength(body)));
  });

  test('a redirect is not followed: the 3xx is the answer, its target never asked', async () => {
    plain.reset();
    plain.handler = (req, res) =>
      req.url === '/moved'
        ? res.end('should not be reached')
        : res.writeHead(302, { location: '/moved' }).end();
    const result = await postOnce(`http://127.0.0.1:${port}/hooks`, body, headers, {
      guard,
      timeoutMs: 5_000,
    });
    assert.equal(result.kind, 'response');
    assert.equal(result.status, 302);
    assert.deepEqual(
      plain.received.map((r) => r.path),
      ['/hooks'],
    );
  });

  test('410 and Retry-After come back as the endpoint sent them', async () => {
    plain.reset();
    plain.handler = (_req, res) => res.writeHead(410, { 'retry-after': '120' }).end('gone');
    const result = await postOnce(`http://127.0.0.1:${port}/hooks`, body, headers, {
      guard,
      timeoutMs: 5_000,
    });
    assert.equal(result.status, 410);
    assert.equal(result.retryAfter, '120');
  });

  test('an endpoint that does not answer in time is a timeout', async () => {
    plain.reset();
    plain.handler = () => undefined; // never answers
    const started = performance.now();
    const result = await postOnce(`http://127.0.0.1:${port}/slow`, body, headers, { guard, timeoutMs: 300 });
    assert.equal(result.kind, 'timeout');
    assert.equal(result.status, null);
    assert.ok(performance.now() - started < 2_000);
    assert.ok(result.ms >= 290, `${result.ms} ms`);
  });

  test('only the first 1 KB of a body is read, however much the endpoint sends', async () => {
    plain.reset();
    plain.handler = (_req, res) => {
      res.writeHead(500);
      // 8 MB, written as fast as the socket takes it: the attempt must not wait for all of it.
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let left = 128;
      const write = () => {
        while (left-- > 0) if (!res.write(chunk)) return void res.once('drain', write);
        res.end();
      };
      write();
    };
    const result = await postOnce(`http://127.0.0.1:${port}/big`, body, headers, { guard, timeoutMs: 5_000 });
    assert.equal(result.status, 500);
    assert.equal(result.body?.length, RESPONSE_BODY_LIMIT);
  });

  test('an exempt host name is resolved and reached over http:// at the address its DNS gives', async () => {
    plain.reset();
    const result = await postOnce(`http://receiver.test:${port}/named`, body, headers, {
      guard,
      timeoutMs: 5_000,
    });
    assert.equal(result.status, 200);
    assert.equal(plain.received[0]?.headers.host, `receiver.test:${port}`);
  });

  test('https connects to the resolved address and checks the certificate against the host name', async () => {
    secure.reset();
    const ca = readFileSync(certificates.ca.cert);
    const url = `https://${SERVER_DNS_NAME}:${securePort}/tls`;
    const result = await postOnce(url, body, headers, { guard, timeoutMs: 5_000, ca });
    assert.equal(result.status, 200, result.error ?? undefined);
    assert.equal(secure.received[0]?.path, '/tls');
    // Without the test CA the same endpoint is not trusted: nothing is sent.
    const untrusted = await postOnce(url, body, headers, { guard, timeoutMs: 5_000 });
    assert.equal(untrusted.kind, 'error');
    assert.match(untrusted.error ?? '', /^TLS failed/);
    assert.equal(secure.received.length, 1);
  });
});

describe('an attempt the guard refuses sends nothing', () => {
  const refused = async (url: string, reason: RegExp) => {
    plain.reset();
    const result = await postOnce(url, body, headers, { guard, timeoutMs: 5_000 });
    assert.equal(result.kind, 'refused', `${url}: ${result.kind} ${result.error}`);
    assert.match(result.error ?? '', reason);
    assert.equal(plain.connections, 0, `${url} was connected to`);
  };

  test('a name that resolves to loopback, and a name with one internal address among public ones', async () => {
    await refused(`https://internal.example.com:${port}/`, /loopback/);
    await refused(`https://mixed.example.com:${port}/`, /private/);
  });

  test('loopback and private address literals', async () => {
    await refused(`https://localhost:${port}/`, /loopback/);
    await refused(`https://[::1]:${port}/`, /loopback/);
    await refused(`https://169.254.169.254/latest/meta-data`, /blocked address range/);
  });

  test('http:// to a host that is not exempt, and credentials in the URL', async () => {
    await refused(`http://internal.example.com:${port}/`, /https/);
    await refused(`https://user:pass@receiver.test:${port}/`, /credentials/);
  });

  test('a name that does not resolve is an error, not an answer', async () => {
    const result = await postOnce('https://nowhere.example.com/', body, headers, { guard, timeoutMs: 5_000 });
    assert.equal(result.kind, 'error');
    assert.equal(result.error, 'The host does not resolve.');
  });
});
