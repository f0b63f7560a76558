// Security: revoking a key closes what it has open within 2 s. An SSE stream of the key
// (waiting in the llm worker's queue behind another key's long generations, so it is certainly
// still open) ends with an `unauthorized` error event and [DONE]; the other key is untouched.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { type ModelStack, sleep, type Stack, startLlmStack } from '../support/stack.js';
import { untilMetricAtLeast, type WorkerProcess } from '../support/worker.js';

let llm: ModelStack;
let worker: WorkerProcess;
let stack: Stack;
let victim: CreatedKey;
let bystander: CreatedKey;

before(async () => {
  llm = await startLlmStack({
    workerEnv: { LLM_MAX_BATCH: '1', LLM_QUEUE_DEPTH: '8' },
    gatewayEnv: { STREAM_FIRST_EVENT_WAIT_MS: '100' },
  });
  ({ worker, stack } = llm);
  victim = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
  bystander = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await llm?.stop();
});

const query = (key: CreatedKey, body: unknown) =>
  fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

test('revoking a key ends its open SSE stream within 2 s with an unauthorized event', async () => {
  const long = { prompt: 'Once upon a time', max_tokens: 2000, temperature: 0 };
  // Another key's long generations hold the worker, so the victim's stream waits in the queue.
  const blockers = [query(bystander, long), query(bystander, long), query(bystander, long)];
  await untilMetricAtLeast(worker, 'llm_queue_depth', 2);
  const res = await query(victim, { ...long, stream: true });
  assert.equal(res.status, 200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const readAll = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
    }
  })();

  const revokedAt = Date.now();
  assert.equal((await admin(stack.gateway, 'DELETE', `/keys/${victim.id}`)).status, 204);
  const ended = await Promise.race([readAll.then(() => true), sleep(2000).then(() => false)]);
  assert.ok(ended, `stream still open ${Date.now() - revokedAt} ms after the revocation`);
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  assert.equal(events.at(-1), '[DONE]');
  const error = JSON.parse(events.at(-2)!) as { error: { code: string } };
  assert.equal(error.error.code, 'unauthorized');
  assert.ok(!text.includes('finish_reason'), 'the generation did not run to its end');

  for (const blocker of await Promise.all(blockers))
    assert.equal(blocker.status, 200, 'the other key is untouched');
});
