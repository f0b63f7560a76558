import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTinyLlama } from '@switchboard/models-dev';
import {
  aptPackages,
  assertDeployedContents,
  assertWorkerImageShape,
  dockerDeployArgs,
  dockerEnv,
  dockerInstructions,
  runDockerDeploy,
  runtimeStage,
  serviceDockerfile,
  startBundledWorker,
  workerDefaultPorts,
} from '../support/bundle.js';
import { repoRoot } from '../support/helm.js';

/**
 * The production install step of services/llm/Dockerfile (`pnpm deploy --prod` of the llm worker
 * alone), run here into a temp folder outside the workspace; the worker is then started from that
 * folder, as the image's CMD starts it, with a MODEL_DIR holding the tiny development model. If
 * the image would miss a file or a dependency (onnxruntime-node's binding included), this fails.
 */

const cpuDockerfile = serviceDockerfile('llm');
const gpuDockerfile = serviceDockerfile('llm', 'Dockerfile.gpu');
const modelId = 'tiny-llama-dev';

describe('llm worker image contents (pnpm deploy --prod, as the Dockerfile runs it)', () => {
  let work: string;
  let out: string;
  let modelDir: string;

  before(async () => {
    assert.ok(
      existsSync(join(repoRoot, 'services', 'llm', 'dist', 'main.js')),
      'services/llm is built (tsc -b services/llm), as the Dockerfile builds it before deploying',
    );
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-llm-'));
    out = join(work, 'out');
    modelDir = join(work, 'models');
    await buildTinyLlama(join(modelDir, 'llm', modelId), { seed: 0 });
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the CPU Dockerfile: the worker image shape, tini as its only system package, no binary downloads', async () => {
    const lines = dockerInstructions(cpuDockerfile);
    assertWorkerImageShape(lines, { service: 'llm', packages: [], exposed: await workerDefaultPorts('llm') });
    assert.deepEqual(aptPackages(lines), ['tini']);
    assert.equal(dockerEnv(runtimeStage(lines)).MODEL_DIR, '/models');
    assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
    assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda/.test(l)));
    assert.ok(!lines.some((l) => l.startsWith('FROM') && /cuda/i.test(l)));
  });

  test('Dockerfile.gpu: the same worker on a CUDA base image, with the CUDA 12 provider', async () => {
    const lines = dockerInstructions(gpuDockerfile);
    assertWorkerImageShape(lines, {
      service: 'llm',
      packages: ['ca-certificates'],
      exposed: await workerDefaultPorts('llm'),
    });
    assert.deepEqual(aptPackages(lines), ['ca-certificates', 'tini']);
    assert.ok(lines.some((l) => /^ARG CUDA_IMAGE=nvidia\/cuda:12\.\S*runtime/.test(l)));
    assert.ok(lines.includes('FROM ${CUDA_IMAGE} AS runtime'), 'the runtime stage is the CUDA image');
    assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda12/.test(l)));
    assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
    const env = dockerEnv(runtimeStage(lines));
    assert.equal(env.ORT_EXECUTION_PROVIDERS, 'cuda,cpu');
    // The runtime stage of both images is the same but for the base and the CUDA provider.
    assert.deepEqual(
      { ...env, ORT_EXECUTION_PROVIDERS: undefined },
      { ...dockerEnv(runtimeStage(dockerInstructions(cpuDockerfile))), ORT_EXECUTION_PROVIDERS: undefined },
    );
    // The deploy is the CPU image's, plus onnxruntime-node's install script (which fetches the
    // CUDA provider); the CPU deploy below thus stands for both.
    assert.deepEqual(
      dockerDeployArgs(gpuDockerfile).filter(
        (a) => a !== '--config.only-built-dependencies=onnxruntime-node',
      ),
      dockerDeployArgs(cpuDockerfile),
    );
  });

  test('pnpm deploy --prod of the llm worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(cpuDockerfile, out);
    assert.ok(args.includes('@switchboard/llm'), `deploys the llm worker: pnpm ${args.join(' ')}`);

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
