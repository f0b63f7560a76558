// The fault proxy itself, against an echo server: each mode does to a connection what it says.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { setTimeout as sleep } from 'node:timers/promises';

let echo: Server;
let proxy: FaultProxy;

before(async () => {
  echo = createServer((socket) => socket.on('error', () => undefined).pipe(socket));
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  proxy = await startFaultProxy(`127.0.0.1:${(echo.address() as { port: number }).port}`);
});

after(async () => {
  await proxy?.close();
  echo?.close();
});

/** Connects through the proxy; collects what comes back and how the connection ended. */
async function open() {
  const [host, port] = proxy.address.split(':') as [string, string];
  const socket: Socket = connect({ host, port: Number(port) });
  let received = '';
  let error: NodeJS.ErrnoException | undefined;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', (e: NodeJS.ErrnoException) => (error = e));
  const closed = new Promise((resolve) => socket.on('close', resolve));
  await once(socket, 'connect');
  return { socket, closed, received: () => received, error: () => error };
}

async function untilReceived(conn: Awaited<ReturnType<typeof open>>, text: string, ms = 5000) {
  for (const deadline = Date.now() + ms; !conn.received().includes(text); await sleep(10))
    if (Date.now() > deadline) assert.fail(`"${text}" not echoed within ${ms} ms (got "${conn.received()}")`);
}

test('pass-through echoes, latency delays each direction', async () => {
  proxy.set({ kind: 'pass' });
  const conn = await open();
  conn.socket.write('hello');
  await untilReceived(conn, 'hello');

  proxy.set({ kind: 'latency', ms: 300 });
  const sent = Date.now();
  conn.socket.write('slow');
  await untilReceived(conn, 'slow');
  assert.ok(Date.now() - sent >= 2 * 300 - 20, 'delayed on the way there and back');
  conn.socket.destroy();
});

test('reset: open connections and new ones are reset; pass again afterwards', async () => {
  proxy.set({ kind: 'pass' });
  const conn = await open();
  proxy.set({ kind: 'reset' });
  await conn.closed;
  assert.equal(conn.error()?.code, 'ECONNRESET');

  const refused = await open().catch(() => undefined);
  if (refused) {
    await refused.closed;
    assert.equal(refused.received(), '');
  }

  proxy.set({ kind: 'pass' });
  const again = await open();
  again.socket.write('back');
  await untilReceived(again, 'back');
  again.socket.destroy();
});

test('black hole: accepted, read, nothing answered, open connections stall; what was held arrives afterwards', async () => {
  proxy.set({ kind: 'pass' });
  const open1 = await open();
  proxy.set({ kind: 'blackhole' });
  open1.socket.write('lost');
  const fresh = await open();
  fresh.socket.write('lost too');
  await sleep(500);
  assert.equal(open1.received(), '');
  assert.equal(fresh.received(), '');
  assert.equal(open1.socket.destroyed, false, 'no reset, no close: the path is just silent');

  proxy.set({ kind: 'pass' });
  await untilReceived(open1, 'lost');
  await untilReceived(fresh, 'lost too');
  const again = await open();
  again.socket.write('through');
  await untilReceived(again, 'through');
  for (const c of [open1, fresh, again]) c.socket.destroy();
});
