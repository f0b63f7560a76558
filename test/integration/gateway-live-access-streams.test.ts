// Open SSE streams follow authorisation, not just revocation (gateway-revocation.test.ts): a
// stream ends within 2 s, with the error event a new request would get, once the key's IP
// allowlist stops matching the client, and once the key store has been silent past
// KEYS_MAX_STALENESS_MS (NATS frozen with SIGSTOP). Each stream waits in the llm worker's queue
// behind long generations, so it is certainly still open when the change comes: keys take turns
// there, so one of its own key waits ahead of it too, putting it behind three generations.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { admin, bearer, createKey, type CreatedKey } from '../support/admin.js';
import { readSse, type SseResult } from '../support/sse.js';
import { errorOf, type ModelStack, sleep, type Stack, startLlmStack } from '../support/stack.js';
import { untilMetricAtLeast, type WorkerProcess } from '../support/worker.js';

const STALENESS_MS = 2000;
let llm: ModelStack;
let worker: WorkerProcess;
let stack: Stack;
let bystander: CreatedKey;

before(async () => {
  llm = await startLlmStack({
    workerEnv: { LLM_MAX_BATCH: '1', LLM_QUEUE_DEPTH: '8' },
    gatewayEnv: { STREAM_FIRST_EVENT_WAIT_MS: '100', KEYS_MAX_STALENESS_MS: String(STALENESS_MS) },
  });
  ({ worker, stack } = llm);
  bystander = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  stack?.nats.resume();
  await llm?.stop();
});

const long = { prompt: 'Once upon a time', max_tokens: 2000, temperature: 0 };
const query = (key: CreatedKey, body: unknown) =>
  fetch(`${stack.gateway.url}/query`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** A stream of `key`, queued behind the bystander's generations; resolves when it is open. */
async function queuedStream(key: CreatedKey) {
  const blockers = [query(bystander, long), query(bystander, long), query(bystander, long)];
  await untilMetricAtLeast(worker, 'llm_queue_depth', 2);
  // Its key's turn comes after one bystander generation; this call takes that turn (its answer
  // is not looked at).
  void query(key, long).catch(() => undefined);
  await untilMetricAtLeast(worker, 'llm_queue_depth', 3);
  const res = await query(key, { ...long, stream: true });
  assert.equal(res.status, 200);
  const ended = readSse(res).then((sse) => ({ sse, at: Date.now() }));
  return {
    /** Resolves with the stream and when it ended, or with undefined if still open after `ms`. */
    endedWithin: (ms: number) => Promise.race([ended, sleep(ms).then(() => undefined)]),
    ended,
    async othersUntouched() {
      for (const blocker of await Promise.all(blockers)) assert.equal(blocker.status, 200);
    },
  };
}

/** The stream's last events: an error naming `code`, then [DONE]; it never ran to its end. */
function assertEndedWith(sse: SseResult, code: string): void {
  assert.equal(sse.data.at(-1), '[DONE]');
  const error = JSON.parse(sse.data.at(-2)!) as { error: { code: string; request_id: string } };
  assert.equal(error.error.code, code);
  assert.ok(error.error.request_id);
  assert.ok(!sse.raw.includes('finish_reason'), 'the generation did not run to its end');
}

test("tightening the key's IP allowlist ends its open stream within 2 s with ip_not_allowed", async () => {
  const key = await createKey(stack.gateway, {
    rate_limit_per_minute: 10_000,
    ip_allowlist: ['127.0.0.1/32'],
  });
  const stream = await queuedStream(key);

  const changedAt = Date.now();
  const patched = await admin(stack.gateway, 'PATCH', `/keys/${key.id}`, { ip_allowlist: ['192.0.2.0/24'] });
  assert.equal(patched.status, 200);
  const ended = await stream.endedWithin(2000);
  assert.ok(ended, `stream still open ${Date.now() - changedAt} ms after the allowlist change`);
  assertEndedWith(ended.sse, 'ip_not_allowed');
  const refused = await query(key, long);
  assert.equal(refused.status, 403, 'a new request gets the same answer');
  assert.equal((await errorOf(refused)).code, 'ip_not_allowed');
  await stream.othersUntouched();
});

test('an open stream ends with unavailable within 2 s of the staleness bound passing while NATS is frozen', async () => {
  const key = await createKey(stack.gateway, { rate_limit_per_minute: 10_000 });
  const stream = await queuedStream(key);
  // The worker is frozen as well, so the stream is still open when the bound passes however fast
  // the generations ahead of it run.
  worker.child.kill('SIGSTOP');

  stack.nats.pause();
  const pausedAt = Date.now();
  try {
    // Inside the bound the cached key is honoured, for the open stream as for new requests (NATS
    // last answered at most a ping interval, 0.5 s, before the pause: the bound is 1.5 s away).
    assert.equal(await stream.endedWithin(STALENESS_MS - 1200), undefined, 'ended inside the bound');
    const ended = await stream.endedWithin(pausedAt + STALENESS_MS + 2000 - Date.now());
    assert.ok(ended, `stream still open ${Date.now() - pausedAt} ms after NATS froze`);
    assertEndedWith(ended.sse, 'unavailable');
    const refused = await query(key, long);
    assert.equal(refused.status, 503, 'a new request gets the same answer');
    assert.equal((await errorOf(refused)).code, 'unavailable');
  } finally {
    stack.nats.resume();
    worker.child.kill('SIGCONT');
  }
  await stream.othersUntouched();
  for (let i = 0; (await fetch(`${stack.gateway.url}/readyz`)).status !== 200; i++) {
    assert.ok(i < 100, 'ready again after NATS came back');
    await sleep(100);
  }
});
