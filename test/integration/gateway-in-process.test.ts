// The gateway as a module: started inside this process by test support, two replicas
// side by side on real NATS and Redis, each with its own metrics, and stop() draining as SIGTERM
// does — requests in flight finish, new connections are refused, what is left is cut after
// SHUTDOWN_GRACE_MS. The file exiting at all shows that stop() leaves nothing open.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { startGateway } from '../support/gateway.js';
import { errorOf, sleep, startStack, type Stack } from '../support/stack.js';

let stack: Stack;
before(async () => {
  stack = await startStack({ gateways: 2 });
});
after(() => stack?.stop());

/** The value of one sample line of a Prometheus text page, or 0 when it is absent. */
async function sample(metricsUrl: string, line: RegExp): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? 0 : Number(found.split(' ').at(-1));
}

const unauthorized = /^switchboard_http_requests_total\{.*status="401".*\} /;

test('two gateways in one process: both serve, and each counts only its own requests', async () => {
  const [first, second] = stack.gateways as [Stack['gateway'], Stack['gateway']];
  assert.notEqual(first.port, second.port);
  const before = await sample(second.metricsUrl, unauthorized);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(`${first.url}/models`);
    assert.equal(res.status, 401);
    assert.equal((await errorOf(res)).code, 'unauthorized');
  }
  assert.equal(await sample(first.metricsUrl, unauthorized), 3);
  assert.equal(await sample(second.metricsUrl, unauthorized), before, 'the other replica saw none');
  assert.equal((await fetch(`${second.url}/readyz`)).status, 200);
});

/** A raw connection to `port`, with what it receives collected. */
async function rawConnection(port: number): Promise<{ socket: Socket; received: () => string }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  return { socket, received: () => received };
}

test('stop() drains: a request in flight finishes, new connections are refused', async () => {
  const gateway = await startGateway(stack.gatewayEnv);
  const body = JSON.stringify({ name: 'drained', tier: 'basic' });
  const { socket, received } = await rawConnection(gateway.port);
  socket.write(
    `POST /admin/api/keys HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer ${gateway.adminToken}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
  );
  await sleep(100);
  let stopped = false;
  const stopping = gateway.stop().then(() => (stopped = true));
  await sleep(200);
  await assert.rejects(fetch(`${gateway.url}/healthz`), 'no new connections while draining');
  assert.equal(stopped, false, 'still waiting for the request in flight');
  const answered = Date.now();
  socket.write(body.slice(10));
  await once(socket, 'close');
  assert.match(received(), /^HTTP\/1\.1 201 /);
  await stopping;
  // The keep-alive connection is closed once answered, not held for the 10 s grace period.
  assert.ok(Date.now() - answered < 5_000, `stop() took ${Date.now() - answered} ms after the answer`);
  await assert.rejects(fetch(gateway.metricsUrl), 'the metrics listener is closed too');
});

test('stop() cuts what is still open when SHUTDOWN_GRACE_MS is over', async () => {
  const gateway = await startGateway({ ...stack.gatewayEnv, SHUTDOWN_GRACE_MS: '300' });
  const { socket } = await rawConnection(gateway.port);
  // Headers never finished: a request in progress, which the drain waits for until the grace ends.
  socket.write('GET /models HTTP/1.1\r\nHost: gateway\r\n');
  await sleep(100);
  const started = Date.now();
  const closed = once(socket, 'close');
  await gateway.stop();
  await closed;
  const took = Date.now() - started;
  assert.ok(took >= 250 && took < 5_000, `stop() took ${took} ms with a 300 ms grace period`);
});
