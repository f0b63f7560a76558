// pnpm bench:diffusion — seconds per image and UNet steps/s of the diffusion worker on the tiny
// development pipeline at 256², 512² and 1024² (20 steps, guidance 7.5): (a) in-process, the same
// adapter and loop plus PNG encoding, no gRPC, HTTP or storage; (b) POST /generate-image through
// the gateway, the PNG stored in the local object store. Numbers, not assertions.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadOnnxPipeline } from '@switchboard/diffusion/dist/adapters/onnx-pipeline.js';
import { denoise } from '@switchboard/diffusion/dist/generation/denoise.js';
import { encodePng } from '@switchboard/diffusion/dist/images/png.js';
import { useLocalModels } from '@switchboard/models';
import { bearer, createKey } from '../support/admin.js';
import { startStack } from '../support/stack.js';
import { startWorker, tinyDiffusionRepository } from '../support/worker.js';
import { spawnGateway } from '../support/gateway.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const steps = 20;
const sizes = [256, 512, 1024];

async function perRun(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm-up: ORT arenas, JIT, sockets
  const started = performance.now();
  for (let i = 0; i < runs; i++) await fn();
  return (performance.now() - started) / runs / 1000;
}

const requestFor = (side: number) => ({
  prompt: 'a lighthouse at dusk',
  negativePrompt: '',
  width: side,
  height: side,
  steps,
  seed: 7n,
  guidanceScale: 7.5,
});

const repo = await tinyDiffusionRepository();
const objects = await mkdtemp(join(tmpdir(), 'switchboard-bench-objects-'));
const worker = await startWorker('diffusion', {
  env: { MODEL_DIR: repo.modelDir, OBJECT_STORE_DIR: objects, LOG_LEVEL: 'error' },
});
const stack = await startStack({
  env: { DIFFUSION_ADDR: worker.address, OBJECT_STORE_DIR: objects, LOG_LEVEL: 'error' },
  // A gateway process of its own, as deployed: what is measured through it is not this process's.
  startGateway: spawnGateway,
});
try {
  const key = await createKey(stack.gateway, { tier: 'enterprise', rate_limit_per_minute: 1_000_000 });
  // The gateway path is measured first, before this process opens sessions of its own: ONNX
  // Runtime's intra-op threads spin for a while after each run, so sessions in two processes
  // taking turns on two cores would slow each other down.
  const gateway = new Map<number, number>();
  for (const side of sizes) {
    const { prompt, width, height, guidanceScale } = requestFor(side);
    gateway.set(
      side,
      await perRun(async () => {
        const res = await fetch(`${stack.gateway.url}/generate-image`, {
          method: 'POST',
          headers: { ...bearer(key.key), 'content-type': 'application/json' },
          body: JSON.stringify({ prompt, width, height, steps, seed: 7, guidance_scale: guidanceScale }),
        });
        if (res.status !== 200) throw new Error(`generate-image: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }),
    );
  }

  useLocalModels(resolve(repo.modelDir, 'diffusion'));
  const model = await loadOnnxPipeline(
    { id: repo.modelId, dir: join(repo.modelDir, 'diffusion', repo.modelId), description: '' },
    { providers: ['cpu'], deviceId: 0 },
  );
  const rows = [];
  for (const side of sizes) {
    const request = requestFor(side);
    const inProcess = await perRun(async () =>
      encodePng(await denoise(model, request, new AbortController().signal)),
    );
    const viaGateway = gateway.get(side)!;
    rows.push({
      size: `${side}×${side}`,
      'in-process s/image': inProcess.toFixed(3),
      'in-process steps/s': (steps / inProcess).toFixed(1),
      'gateway s/image': viaGateway.toFixed(3),
      'gateway steps/s': (steps / viaGateway).toFixed(1),
      'gateway of in-process': `${Math.round((inProcess / viaGateway) * 100)}%`,
    });
  }
  process.stdout.write(
    `\ndiffusion bench: tiny development pipeline, ${steps} steps, guidance 7.5, ${runs} runs, CPU\n`,
  );
  console.table(rows);
  await model.dispose();
} finally {
  await stack.stop();
  await worker.stop();
  await repo.remove();
  await rm(objects, { recursive: true, force: true });
}
