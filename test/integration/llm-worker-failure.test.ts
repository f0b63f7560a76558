// A worker that dies in the middle of a stream: the client must get the API's mid-stream error
// (`data: {"error": …}` then `data: [DONE]`) rather than a hung or silently truncated stream, and
// the next request a prompt 503.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { errorOf, type ModelStack, type Stack, startLlmStack } from '../support/stack.js';
import type { WorkerProcess } from '../support/worker.js';

let llm: ModelStack;
let worker: WorkerProcess;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  llm = await startLlmStack();
  ({ worker, stack } = llm);
  key = await createKey(stack.gateway, { rate_limit_per_minute: 1000 });
});
after(async () => {
  await llm?.stop();
});

test('a worker killed mid-stream ends the stream with an error event, then [DONE]', async () => {
  const res = await fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'Once upon a time', stream: true, max_tokens: 2000, temperature: 0 }),
  });
  assert.equal(res.status, 200);
  const reader: ReadableStreamDefaultReader<Uint8Array> = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  while (!raw.includes('"delta"')) {
    const { value, done } = await reader.read();
    assert.ok(!done, 'the stream ended before the first delta');
    raw += decoder.decode(value, { stream: true });
  }
  worker.child.kill('SIGKILL');
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
  }
  const events = raw
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));
  assert.equal(events.at(-1), '[DONE]', 'the stream still ends with [DONE]');
  const last = JSON.parse(events.at(-2)!) as {
    error?: { code: string; message: string; request_id: string };
  };
  assert.ok(last.error, `an error event precedes [DONE]: ${events.at(-2)}`);
  assert.ok(['unavailable', 'internal'].includes(last.error.code), `code ${last.error.code}`);
  assert.equal(last.error.request_id, res.headers.get('x-request-id'));
  assert.ok(
    !events.some((e) => e.includes('finish_reason')),
    'no finish event for a generation that did not finish',
  );
  assert.ok(!/127\.0\.0\.1|ECONN/.test(last.error.message), 'no worker address in the message');

  const next = await fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'hi', max_tokens: 4 }),
  });
  assert.equal(next.status, 503);
  assert.equal((await errorOf(next)).code, 'unavailable');
});
