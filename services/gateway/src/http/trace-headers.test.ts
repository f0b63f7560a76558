import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { acceptTraceContextFromTrustedProxies } from './trace-headers.js';

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** The trace headers a request handler sees, for a request from 127.0.0.1 carrying them. */
async function seenBehind(trustedProxies: string[]): Promise<Record<string, unknown>> {
  let seen: Record<string, unknown> = {};
  const server = createServer((req, res) => {
    seen = { traceparent: req.headers.traceparent, tracestate: req.headers.tracestate };
    res.end();
  });
  acceptTraceContextFromTrustedProxies(server, trustedProxies);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
      headers: { traceparent: TRACEPARENT, tracestate: 'vendor=1' },
    });
    await res.arrayBuffer();
  } finally {
    server.close();
  }
  return seen;
}

test('a trusted proxy’s trace context reaches the request', async () => {
  assert.deepEqual(await seenBehind(['127.0.0.0/8']), { traceparent: TRACEPARENT, tracestate: 'vendor=1' });
});

test('anyone else’s trace context is dropped before the request is handled', async () => {
  assert.deepEqual(await seenBehind(['10.0.0.0/8']), { traceparent: undefined, tracestate: undefined });
  assert.deepEqual(await seenBehind([]), { traceparent: undefined, tracestate: undefined });
});
