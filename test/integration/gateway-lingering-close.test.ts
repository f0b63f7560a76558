// Answers sent before the body was read (401, 413) reach clients that are still sending: the
// gateway reads and drops the rest of the body before it closes, within its bounds. The gateway
// runs with short bounds so the test does not wait for the defaults.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

const MB = 1_000_000;
const LINGER_MS = 3000;
const LINGER_MAX_BYTES = 30 * MB;
const WINDOW_MS = 1000;

let stack: Stack;
let key: CreatedKey;

before(async () => {
  stack = await startStack({
    env: {
      HTTP_LINGER_MS: String(LINGER_MS),
      HTTP_LINGER_MAX_BYTES: String(LINGER_MAX_BYTES),
      HTTP_BODY_RATE_WINDOW_MS: String(WINDOW_MS),
      HTTP_BODY_MIN_BYTES_PER_SECOND: '1024',
    },
  });
  key = await createKey(stack.gateway, { tier: 'basic', rate_limit_per_minute: 10_000 });
});
after(() => stack?.stop());

test("fetch sending 26 MB to a basic key's 25 MB upload limit gets the 413", async () => {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(26 * MB)], { type: 'audio/wav' }), 'long.wav');
  const res = await fetch(`${stack.gateway.url}/transcribe`, {
    method: 'POST',
    headers: bearer(key.key),
    body: form,
  });
  assert.equal(res.status, 413);
  assert.equal((await errorOf(res)).code, 'payload_too_large');
});

test('fetch sending 10 MB with a wrong key gets the 401', async () => {
  const res = await fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer('sk-wrong'), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'x'.repeat(10 * MB) }),
  });
  assert.equal(res.status, 401);
  assert.equal((await errorOf(res)).code, 'unauthorized');
});

interface RawClient {
  socket: Socket;
  received(): string;
  /** The first error on the connection (a reset while sending), if any. */
  error(): Error | undefined;
  /** Resolves with the milliseconds from the start until the gateway closed the socket. */
  closed: Promise<number>;
}

/** A raw connection that sends a 401-bound request head and then calls `send` until closed. */
function rawUpload(contentLength: number, send: (socket: Socket) => void, everyMs: number): RawClient {
  const { host, port } = new URL(stack.gateway.url);
  // Half-open, as an uploading client is: the gateway's FIN after its answer does not end the upload.
  const socket = connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
  const started = Date.now();
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  let failed: Error | undefined;
  socket.on('error', (error) => (failed ??= error));
  socket.write(
    `POST /query HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${contentLength}\r\n\r\n{`,
  );
  const timer = setInterval(() => {
    if (socket.writable) send(socket);
  }, everyMs);
  const closed = new Promise<number>((resolve) =>
    socket.once('close', () => {
      clearInterval(timer);
      resolve(Date.now() - started);
    }),
  );
  return { socket, received: () => text, error: () => failed, closed };
}

async function closedWithin(client: RawClient, limitMs: number, what: string): Promise<number> {
  const took = await Promise.race([client.closed, sleep(limitMs).then(() => -1)]);
  client.socket.destroy();
  assert.notEqual(took, -1, `${what}: socket still open after ${limitMs} ms`);
  return took;
}

test('a body trickling below the minimum rate after the answer is cut by the rate rule', async () => {
  const client = rawUpload(1 * MB, (socket) => socket.write(' '), 200);
  const took = await closedWithin(client, 2 * WINDOW_MS + 1500, 'trickle after 401');
  assert.ok(took < LINGER_MS, `cut after ${took} ms, by the linger time rather than the rate`);
  assert.match(client.received(), /^HTTP\/1\.1 401 /);
  assert.match(client.received(), /connection: close/i);
});

test('a body sent at a fair rate is read for at most the linger time', async () => {
  // 8 kB/s, well above the minimum, for a body that would take over 2 minutes.
  const client = rawUpload(1 * MB, (socket) => socket.write(' '.repeat(2000)), 250);
  const took = await closedWithin(client, LINGER_MS + 3000, 'fair body after 401');
  assert.ok(took >= LINGER_MS - 500, `cut after ${took} ms, before the linger time`);
  assert.match(client.received(), /^HTTP\/1\.1 401 /);
});

test('a body sent fast is read for at most the linger byte cap', async () => {
  const chunk = Buffer.alloc(1 * MB, 0x20);
  let sent = 0;
  const client = rawUpload(
    200 * MB,
    (socket) => {
      // Only as fast as the gateway reads: what it accepted, not what waits in this process.
      while (socket.writableLength < 4 * MB && sent < 200 * MB) {
        socket.write(chunk);
        sent += chunk.length;
      }
    },
    5,
  );
  await closedWithin(client, LINGER_MS, 'fast body after 401');
  assert.ok(sent > LINGER_MAX_BYTES, `only ${sent} bytes were sent`);
  assert.ok(sent < 100 * MB, `the gateway read ${sent} bytes before cutting`);
  assert.match(client.received(), /^HTTP\/1\.1 401 /);
});

test('a body that ends within the bounds is read whole, then the connection closes', async () => {
  const body = JSON.stringify({ prompt: 'x'.repeat(2 * MB) });
  const client = rawUpload(body.length, () => undefined, 1000);
  // In pieces, as a client on a real network sends: later pieces arrive after the answer.
  for (let at = 1; at < body.length; at += 100_000) {
    client.socket.write(body.slice(at, at + 100_000));
    await sleep(10);
  }
  await sleep(300);
  assert.match(client.received(), /^HTTP\/1\.1 401 /);
  assert.equal(client.error(), undefined, 'the body after the answer was sent without a reset');
  // The gateway's side is closed once the body is in: more bytes are answered with a reset.
  client.socket.write('x');
  await sleep(100);
  client.socket.write('x');
  await closedWithin(client, WINDOW_MS, 'whole body after 401');
});
