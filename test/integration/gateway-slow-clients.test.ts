// Security: slow clients cannot hold sockets. Headers and bodies have timeouts
// (slowloris), while a body sent at a fair rate — longer than the measuring window — is read
// whole. The gateway runs with short windows so the test does not wait for the defaults.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { sleep, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
let key: CreatedKey;

before(async () => {
  stack = await startStack({
    env: {
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_BODY_RATE_WINDOW_MS: '2000',
      HTTP_BODY_MIN_BYTES_PER_SECOND: '1024',
    },
  });
  key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
});
after(() => stack?.stop());

interface Trickle {
  socket: Socket;
  /** Everything the gateway sent back. */
  received(): string;
  /** Resolves with the milliseconds from the start until the gateway closed the socket. */
  closed: Promise<number>;
  stop(): void;
}

/** Opens a raw connection, sends `head` at once, then one byte of `drip` per second. */
function trickle(head: string, drip: string): Trickle {
  const { port } = new URL(stack.gateway.url);
  const socket = connect(Number(port), '127.0.0.1');
  const started = Date.now();
  let text = '';
  let index = 0;
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => undefined);
  const timer = setInterval(() => {
    if (socket.writable) socket.write(drip[index++ % drip.length]!);
  }, 1000);
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  socket.write(head);
  return {
    socket,
    received: () => text,
    closed,
    stop() {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** Waits for the socket to close, failing after `limitMs` (the client would hold it forever). */
async function closedWithin(t: Trickle, limitMs: number, what: string): Promise<number> {
  const timeout = sleep(limitMs).then(() => -1);
  const took = await Promise.race([t.closed, timeout]);
  t.stop();
  assert.notEqual(took, -1, `${what}: socket still open after ${limitMs} ms`);
  return took;
}

const host = () => `Host: ${new URL(stack.gateway.url).host}\r\n`;

test('a 1-byte-per-second body after a 401 is cut with the answer', async () => {
  const t = trickle(
    `POST /query HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
    'a',
  );
  await closedWithin(t, 6000, 'slow body after 401');
  assert.match(t.received(), /^HTTP\/1\.1 401 /);
  assert.match(t.received(), /connection: close/i);
});

test('a 1-byte-per-second body with a valid key is cut after the measuring window', async () => {
  const t = trickle(
    `POST /query HTTP/1.1\r\n${host()}Authorization: Bearer ${key.key}\r\n` +
      'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    ' ',
  );
  await closedWithin(t, 8000, 'slow body with a valid key');
});

test('headers sent one byte per second are cut by the headers timeout', async () => {
  const t = trickle(`GET /models HTTP/1.1\r\n${host()}`, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n');
  await closedWithin(t, 6000, 'slow headers');
});

test('a body sent at a fair rate for longer than the window is read whole', async () => {
  // 300 kB in 30 pieces over about 6 s: 50 kB/s, well above the minimum, across three windows.
  const prompt = 'x'.repeat(300_000);
  const body = JSON.stringify({ prompt, max_tokens: 1 });
  const pieces = 30;
  const size = Math.ceil(body.length / pieces);
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (let i = 0; i < pieces; i++) {
        controller.enqueue(new TextEncoder().encode(body.slice(i * size, (i + 1) * size)));
        await sleep(200);
      }
      controller.close();
    },
  });
  const res = await fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  });
  // The body was read and parsed: the route answers (no llm worker runs here → 503 unavailable).
  assert.equal(res.status, 503, await res.text());
});
