// Three diffusion worker processes behind one DNS name (pods behind a headless Service), sharing
// one S3-protocol store with the gateway: one gateway's images spread evenly over them.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bearer, createKey, type CreatedKey } from '../support/admin.js';
import { replicaMetrics, startWorkerReplicas, type WorkerReplicas } from '../support/replicas.js';
import { startS3, type S3Server } from '../support/s3.js';
import { type Stack, startStack, until } from '../support/stack.js';
import { tinyDiffusionRepository, type TinyModelRepository } from '../support/worker.js';

const bucket = 'switchboard-images';
let s3: S3Server;
let repo: TinyModelRepository;
let replicas: WorkerReplicas;
let stack: Stack;
let key: CreatedKey;

before(async () => {
  [s3, repo] = await Promise.all([startS3(), tinyDiffusionRepository()]);
  replicas = await startWorkerReplicas('diffusion', 3, {
    MODEL_DIR: repo.modelDir,
    ORT_INTRA_OP_THREADS: '1',
    ...s3.env(bucket),
  });
  stack = await startStack({ env: { ...replicas.gatewayEnv, ...s3.env(bucket) } });
  key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: null });
});
after(async () => {
  await stack?.stop();
  await replicas?.stop();
  await repo?.remove();
  await s3?.stop();
});

test('60 images from one gateway: each of 3 replicas makes 20 ± 6, as its own metrics say too', async () => {
  const view = replicaMetrics(stack.gateway.metricsUrl, 'diffusion');
  await until(async () => (await view.resolved()).length === 3, 'three replicas resolved');
  const before = await view.calls();
  const steps = 'diffusion_unet_steps_total';
  const stepsBefore = await Promise.all(replicas.workers.map((w) => w.metric(steps)));
  for (let round = 0; round < 15; round++) {
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        fetch(`${stack.gateway.url}/generate-image`, {
          method: 'POST',
          headers: { ...bearer(key.key), 'content-type': 'application/json' },
          body: JSON.stringify({
            prompt: 'a lighthouse',
            width: 64,
            height: 64,
            steps: 1,
            seed: round * 4 + i,
          }),
        }),
      ),
    );
    for (const res of answers) assert.equal(res.status, 200, await res.clone().text());
    await Promise.all(answers.map((res) => res.arrayBuffer()));
  }
  const counts = await view.callsSince(before);
  for (const [index, worker] of replicas.workers.entries()) {
    const count = counts.get(worker.address) ?? 0;
    assert.ok(
      count >= 14 && count <= 26,
      `${worker.address}: ${count} of 60 (${JSON.stringify([...counts])})`,
    );
    // One denoising step per image, each counted by the process that made it.
    assert.equal((await worker.metric(steps)) - stepsBefore[index]!, count, `${worker.address}'s own count`);
  }
});
