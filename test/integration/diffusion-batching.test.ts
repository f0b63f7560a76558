// Batched denoising through the real gateway and a real diffusion worker process (tiny random-weight
// pipeline on ONNX Runtime, PNGs in a real S3-protocol server): requests of the same size and step
// count that wait at the same time run as one UNet batch, and each PNG is byte for byte the one the
// same request gives alone. The batch is formed deterministically: a long request holds the only
// slot until the four requests are waiting (the worker's own queue gauge says so), then leaves.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { startS3, type S3Server } from '../support/s3.js';
import { type ModelStack, sleep, startModelStack } from '../support/stack.js';

const bucket = 'switchboard-images';
let s3: S3Server;
let diffusion: ModelStack;
let key: CreatedKey;

before(async () => {
  s3 = await startS3();
  diffusion = await startModelStack('diffusion', {
    workerEnv: { DIFFUSION_CONCURRENCY: '1', DIFFUSION_QUEUE_DEPTH: '8', DIFFUSION_MAX_BATCH: '4' },
    sharedEnv: s3.env(bucket),
  });
  key = await createKey(diffusion.stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 10_000 });
});
after(async () => {
  await diffusion?.stop();
  await s3?.stop();
});

const generate = (body: unknown, signal?: AbortSignal) =>
  fetch(`${diffusion.stack.gateway.url}/generate-image`, {
    method: 'POST',
    headers: { ...bearer(key.key), 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  });

async function png(res: Promise<Response>): Promise<Buffer> {
  const answer = await res;
  assert.equal(answer.status, 200, await answer.clone().text());
  const { url } = (await answer.json()) as { url: string };
  const file = await fetch(`${diffusion.stack.gateway.url}${url}`, { headers: bearer(key.key) });
  assert.equal(file.status, 200);
  return Buffer.from(await file.arrayBuffer());
}

/** Polls a worker metric until `ok` holds (no timing is asserted: it only sequences the test). */
async function until(metric: string, ok: (value: number) => boolean, labels?: Record<string, string>) {
  for (let i = 0; i < 600; i++) {
    if (ok(await diffusion.worker.metric(metric, labels))) return;
    await sleep(20);
  }
  assert.fail(`${metric} never reached the expected value`);
}

const batchBucket = (le: string) => diffusion.worker.metric('diffusion_batch_size_bucket', { le });

test('four waiting requests of one size run as one batch; each PNG equals the one it gives alone', async () => {
  const shared = { width: 128, height: 128, steps: 4 };
  const bodies = [
    { ...shared, prompt: 'a lighthouse at dusk', seed: 101, guidance_scale: 7.5 },
    { ...shared, prompt: 'a red bicycle', seed: 202, guidance_scale: 3 },
    { ...shared, prompt: 'a fox in the snow', negative_prompt: 'blurry', seed: 303, guidance_scale: 7.5 },
    { ...shared, prompt: 'a lighthouse at dusk', seed: 404, guidance_scale: 12 },
  ];

  // A request of another size holds the only slot while the four queue behind it.
  const holder = new AbortController();
  const held = generate(
    { prompt: 'hold the slot', width: 1024, height: 1024, steps: 100, seed: 1 },
    holder.signal,
  ).catch((error: unknown) => error);
  await until('diffusion_active_generations', (n) => n >= 1);
  // The holder's batch (of one) is counted by now; buckets are cumulative.
  const [upToThree, upToFour] = [await batchBucket('3'), await batchBucket('4')];
  const batched = bodies.map((body) => png(generate(body)));
  await until('diffusion_queue_depth', (n) => n === 4);
  holder.abort();
  assert.ok((await held) instanceof Error);
  const together = await Promise.all(batched);

  assert.equal((await batchBucket('3')) - upToThree, 0, 'no batch of fewer than four');
  assert.equal((await batchBucket('4')) - upToFour, 1, 'the four ran as one batch');
  assert.equal(new Set(together.map((p) => p.toString('base64'))).size, 4, 'four different images');

  for (const [i, body] of bodies.entries()) {
    const alone = await png(generate(body));
    assert.ok(alone.equals(together[i]!), `request ${i}: the batched PNG differs from the one alone`);
  }
  assert.equal(await diffusion.worker.metric('diffusion_active_generations'), 0);
  assert.equal(await diffusion.worker.metric('diffusion_queue_depth'), 0);
});
