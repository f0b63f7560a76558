// The tier's "model calls at once" and fair queueing, through two gateway replicas and real
// workers: one key past its limit is refused with 429 concurrency_limit and Retry-After however
// its calls are spread over the replicas, another key's call is served while the first key's run,
// and a key with a backlog (a higher tier) does not make another key's call wait behind it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey } from '../support/admin.js';
import { startGateway, type GatewayProcess } from '../support/gateway.js';
import { startS3, type S3Server } from '../support/s3.js';
import { errorOf, sleep, startModelStack, type ModelStack, until } from '../support/stack.js';
import type { WorkerProcess } from '../support/worker.js';

let llm: ModelStack;
let diffusion: ModelStack;
let s3: S3Server;
/** A second replica beside each stack's gateway. */
let llmReplica: GatewayProcess;

before(async () => {
  s3 = await startS3();
  [llm, diffusion] = await Promise.all([
    startModelStack('llm'),
    startModelStack('diffusion', {
      workerEnv: { DIFFUSION_CONCURRENCY: '1', DIFFUSION_QUEUE_DEPTH: '8', DIFFUSION_MAX_BATCH: '1' },
      sharedEnv: s3.env('switchboard-images'),
    }),
  ]);
  llmReplica = await startGateway(llm.stack.gatewayEnv);
});
after(async () => {
  await llmReplica?.stop();
  await Promise.all([llm?.stop(), diffusion?.stop()]);
  await s3?.stop();
});

const post = (gateway: GatewayProcess, path: string, key: string, body: unknown, signal?: AbortSignal) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

const untilMetric = (worker: WorkerProcess, name: string, ok: (value: number) => boolean) =>
  until(async () => ok(await worker.metric(name)), `${name} reaches the expected value`);

async function assertConcurrencyLimit(res: Response): Promise<void> {
  assert.equal(res.status, 429, await res.clone().text());
  assert.match(res.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
  assert.equal((await errorOf(res)).code, 'concurrency_limit');
}

test('twenty long queries from one basic key over two replicas: two run, the rest get 429 concurrency_limit; another key is served meanwhile', async (t) => {
  const heavy = await createKey(llm.stack.gateway, { rate_limit_per_minute: 10_000 });
  const light = await createKey(llm.stack.gateway, { rate_limit_per_minute: 10_000 });
  const short = { prompt: 'Hello', max_tokens: 16, temperature: 0 };
  const started = performance.now();
  assert.equal((await post(llm.stack.gateway, '/query', light.key, short)).status, 200);
  const unloadedMs = performance.now() - started;

  const long = { prompt: 'Tell me a story', max_tokens: 2000, temperature: 0 };
  const settled = (res: Promise<Response>) => res.then((answer) => ({ answer, at: performance.now() }));
  const calls = Array.from({ length: 20 }, (_, i) =>
    settled(post(i % 2 === 0 ? llm.stack.gateway : llmReplica, '/query', heavy.key, long)),
  );
  await untilMetric(llm.worker, 'llm_active_generations', (n) => n === 2);

  // Another key, while the heavy key's two generations run (each takes far longer than this).
  const loadedStart = performance.now();
  const res = await post(llmReplica, '/query', light.key, short);
  const lightDone = performance.now();
  assert.equal(res.status, 200, await res.clone().text());
  t.diagnostic(
    `short query: ${unloadedMs.toFixed(0)} ms unloaded, ${(lightDone - loadedStart).toFixed(0)} ms beside the heavy key`,
  );

  const results = await Promise.all(calls);
  const ran = results.filter((r) => r.answer.status === 200);
  assert.equal(ran.length, 2, 'two calls run at once');
  for (const { at } of ran) assert.ok(at > lightDone, "the other key's query was answered first");
  const refused = results.filter((r) => r.answer.status !== 200);
  assert.equal(refused.length, 18);
  for (const { answer } of refused) await assertConcurrencyLimit(answer);

  // The heavy key's places come back when its calls end, on whichever replica they ran.
  await untilMetric(llm.worker, 'llm_active_generations', (n) => n === 0);
  for (let i = 0; ; i++) {
    const again = await post(llmReplica, '/query', heavy.key, short);
    if (again.status === 200) break;
    assert.ok(i < 50, `places not given back: ${again.status}`);
    await sleep(100);
  }
});

test("a key with a backlog of images does not make another key's image wait behind it; a basic key's third is refused", async () => {
  const gateway = diffusion.stack.gateway;
  const heavy = await createKey(gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
  const light = await createKey(gateway, { rate_limit_per_minute: 10_000 });
  // Each image takes long enough to make (about ten times its storing and answering) that answers
  // reach the client in the order the worker took the calls, give or take one.
  const body = (seed: number) => ({ prompt: 'a lighthouse', width: 128, height: 128, steps: 60, seed });
  const finished: string[] = [];
  const track = (name: string, res: Promise<Response>) =>
    res.then((answer) => {
      finished.push(name);
      return answer;
    });

  // The heavy key's first call holds the only slot (aborted later); its next five wait.
  const holder = new AbortController();
  const held = post(
    gateway,
    '/generate-image',
    heavy.key,
    { prompt: 'hold the slot', width: 1024, height: 1024, steps: 100, seed: 1 },
    holder.signal,
  ).catch((error: unknown) => error);
  await untilMetric(diffusion.worker, 'diffusion_active_generations', (n) => n === 1);
  const backlog: Promise<Response>[] = [];
  for (let i = 2; i <= 6; i++)
    backlog.push(track('heavy', post(gateway, '/generate-image', heavy.key, body(i))));
  await untilMetric(diffusion.worker, 'diffusion_queue_depth', (n) => n === 5);
  const lightCalls = [track('light', post(gateway, '/generate-image', light.key, body(7)))];
  await untilMetric(diffusion.worker, 'diffusion_queue_depth', (n) => n === 6);
  lightCalls.push(post(gateway, '/generate-image', light.key, body(8)));
  // Queued before the third is sent: two requests sent together may reach the gateway's count in
  // either order, and the one refused must be the third.
  await untilMetric(diffusion.worker, 'diffusion_queue_depth', (n) => n === 7);
  await assertConcurrencyLimit(await post(gateway, '/generate-image', light.key, body(9)));
  holder.abort();
  assert.ok((await held) instanceof Error);

  for (const res of [...backlog, ...lightCalls]) assert.equal((await res).status, 200);
  // The worker serves one of the heavy key's, then the light key's: not all five of its backlog
  // first, as first come, first served would (light sixth). Answers are counted as they reach the
  // client, after each image is stored, so the next heavy answer may overtake the light one.
  assert.ok(finished.indexOf('light') <= 2, `finished in order ${finished.join(', ')}`);
});
