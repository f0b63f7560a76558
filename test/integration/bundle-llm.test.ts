import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '@switchboard/devcluster';
import { waitForServing } from '@switchboard/grpc';
import { buildTinyLlama } from '@switchboard/models-dev';
import {
  dockerDeployArgs,
  dockerInstructions,
  assertDeployedContents,
  startBundled,
  runDockerDeploy,
  serviceDockerfile,
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

/** The runtime-stage shape both llm images share. */
function assertWorkerImageShape(lines: string[]): void {
  const from = lines.filter((l) => l.startsWith('FROM'));
  assert.ok(from.length >= 2, 'multi-stage');
  assert.ok(lines.some((l) => l.startsWith('ARG NODE_IMAGE=node:20-bookworm-slim')));
  assert.ok(lines.some((l) => /pnpm install --frozen-lockfile/.test(l)));
  assert.ok(lines.some((l) => /--filter "@switchboard\/llm\.\.\."/.test(l)));
  assert.ok(lines.some((l) => /apt-get install .*\btini\b/.test(l)));
  assert.deepEqual(
    lines.filter((l) => l.startsWith('USER')),
    ['USER 10001:10001'],
  );
  assert.ok(lines.some((l) => l.startsWith('ENV ') && /\bMODEL_DIR=\/models\b/.test(l)));
  assert.ok(lines.includes('ENTRYPOINT ["/usr/bin/tini", "--"]'));
  assert.ok(lines.includes('CMD ["node", "dist/main.js"]'));
  assert.ok(lines.includes('EXPOSE 50051 9464'));
}

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

  test('the CPU Dockerfile: multi-stage, tini, non-root, no binary downloads, the worker ports', () => {
    const lines = dockerInstructions(cpuDockerfile);
    assertWorkerImageShape(lines);
    assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
    assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda/.test(l)));
    assert.ok(!lines.some((l) => l.startsWith('FROM') && /cuda/i.test(l)));
  });

  test('Dockerfile.gpu: the same worker on a CUDA base image, with the CUDA 12 provider', () => {
    const lines = dockerInstructions(gpuDockerfile);
    assertWorkerImageShape(lines);
    assert.ok(lines.some((l) => /^ARG CUDA_IMAGE=nvidia\/cuda:12\.\S*runtime/.test(l)));
    assert.ok(lines.includes('FROM ${CUDA_IMAGE} AS runtime'), 'the runtime stage is the CUDA image');
    assert.ok(lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=cuda12/.test(l)));
    assert.ok(!lines.some((l) => /ONNXRUNTIME_NODE_INSTALL=skip/.test(l)));
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
    assert.ok(existsSync(join(out, 'dist', 'main.js')), 'the deploy test ran first');
    const port = await freePort();
    const metricsPort = await freePort();
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment.
    const { child, output: logs } = startBundled(
      out,
      {
        GRPC_PORT: String(port),
        GRPC_HOST: '127.0.0.1',
        METRICS_PORT: String(metricsPort),
        MODEL_DIR: modelDir,
        LOG_LEVEL: 'warn',
      },
      t,
    );

    const exited = once(child, 'exit').then(([code, signal]) => `exited (${String(code ?? signal)})`);
    const status = await Promise.race([waitForServing(`127.0.0.1:${port}`, { timeoutMs: 30_000 }), exited]);
    assert.equal(status, 'SERVING', `the worker did not report SERVING:\n${logs()}`);

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /process_cpu_user_seconds_total/);
    assert.match(text, /^llm_queue_depth\{/m);
    assert.match(text, new RegExp(`^llm_model_load_seconds\\{model="${modelId}",status="ready"`, 'm'));

    // SIGTERM (what tini forwards) drains and exits cleanly.
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0, `exit after SIGTERM:\n${logs()}`);
  });
});
