import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTinyLlama } from '@switchboard/models-dev';
import {
  assertCpuModelImage,
  assertDeployedContents,
  assertGpuVariant,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { repoRoot } from '../support/helm.js';

/**
 * The production install step of the llm image (deploy/docker/Dockerfile with SERVICE=llm: `pnpm
 * deploy --prod` of the llm worker alone), run here into a temp folder outside the workspace; the
 * worker is then started from that folder, as the image's CMD starts it, with a MODEL_DIR holding the tiny development model. If
 * the image would miss a file or a dependency (onnxruntime-node's binding included), this fails.
 */

const cpuImage = serviceImage('llm');
const modelId = 'tiny-llama-dev';

describe('llm worker image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let modelDir: string;

  before(async () => {
    assert.ok(
      existsSync(join(repoRoot, 'services', 'llm', 'dist', 'main.js')),
      'services/llm is built (tsc -b services/llm), as the image build does before deploying',
    );
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-llm-'));
    out = join(work, 'out');
    modelDir = join(work, 'models');
    await buildTinyLlama(join(modelDir, 'llm', modelId), { seed: 0 });
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the CPU image: the worker image shape, tini as its only system package, no binary downloads', async () => {
    await assertCpuModelImage('llm');
  });

  test('the CUDA variant: the same worker on a CUDA base image, with the CUDA 12 provider', async () => {
    await assertGpuVariant('llm');
  });

  test('pnpm deploy --prod of the llm worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(cpuImage, out);
    assert.ok(args.includes('{services/llm}'), `deploys the llm worker: pnpm ${args.join(' ')}`);

    assertDeployedContents(out, {
      libs: ['config', 'contracts', 'errors', 'grpc', 'models', 'telemetry'],
      shipped: ['onnxruntime-node', '@huggingface/transformers', 'prom-client', 'zod'],
      notShipped: ['typescript', '@switchboard/models-dev', '@switchboard/devcluster'],
    });
  });

  test('the worker starts from the deployed folder, loads the model and reports SERVING', async (t) => {
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment.
    const worker = await startBundledWorker(out, { MODEL_DIR: modelDir }, t);

    const metrics = await worker.metrics();
    assert.match(metrics, /process_cpu_user_seconds_total/);
    assert.match(metrics, /^llm_queue_depth\{service="llm"\} 0$/m);
    assert.match(metrics, new RegExp(`^llm_model_load_seconds\\{model="${modelId}",status="ready"`, 'm'));

    // SIGTERM (what tini forwards) drains and exits cleanly.
    assert.equal(await worker.terminate(), 0, `exit after SIGTERM:\n${worker.output()}`);
  });
});
