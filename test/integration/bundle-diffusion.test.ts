import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, join, sep } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import {
  Diffusion,
  type GenerateImageRequest,
  type GenerateImageResponse__Output,
} from '@switchboard/contracts';
import { clusterSecretInterceptor } from '@switchboard/grpc';
import { buildTinyDiffusion } from '@switchboard/models-dev';
import { LocalObjectStore } from '@switchboard/objectstore';
import {
  assertCpuModelImage,
  assertDeployedContents,
  assertGpuVariant,
  linkedLibraries,
  nativeFiles,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { testClusterSecret } from '../support/gateway.js';
import { pngSize } from '../support/png.js';

/**
 * The production install step of the diffusion image (deploy/docker/Dockerfile with
 * SERVICE=diffusion: `pnpm deploy --prod` of the diffusion worker alone), run here into a temp folder outside the workspace; the worker is then
 * started from that folder, as the image's CMD starts it, with a MODEL_DIR holding the tiny
 * development pipeline and a local object store. It must report SERVING and generate an image over
 * gRPC, stored as a PNG, so a file or dependency the image would miss (onnxruntime-node's binding,
 * the tokenizer, sharp's prebuilt binary and its libvips) fails here.
 */

const cpuImage = serviceImage('diffusion');
const gpuImage = serviceImage('diffusion', 'cuda');
const modelId = 'tiny-sd-dev';

/**
 * What both runtime images hold besides the app folder, for native code to link against: glibc
 * (with its loader and the kernel's vDSO) and the C++ runtime, which the Node binary itself needs.
 * A native dependency asking for more would need a system package the images do not install.
 */
const baseImageLibrary =
  /^(linux-vdso\.so\.1|ld-linux-[\w-]+\.so\.\d+|lib(c|m|dl|pthread|rt|resolv)\.so\.\d+|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$/;

/** The glibc of each runtime base image the Dockerfile may name (a new base must be added here). */
const baseImageGlibc: [RegExp, string][] = [
  [/^node:\d+-bookworm(-slim)?$/, '2.36'], // Debian 12
  [/^nvidia\/cuda:\S+-ubuntu24\.04$/, '2.39'], // Ubuntu 24.04
];

const version = (text: string) => text.split('.').map(Number) as [number, number];
const atLeast = (have: string, need: string) => {
  const [h1, h2] = version(have);
  const [n1, n2] = version(need);
  return h1 > n1 || (h1 === n1 && h2 >= n2);
};

/** Diffusion.GenerateImage as the gateway calls it. */
function generateImage(
  address: string,
  request: GenerateImageRequest,
): Promise<GenerateImageResponse__Output> {
  const client = new Diffusion(address, credentials.createInsecure(), {
    interceptors: [clusterSecretInterceptor(testClusterSecret)],
  });
  return new Promise<GenerateImageResponse__Output>((resolve, reject) => {
    client.GenerateImage(
      request,
      { deadline: Date.now() + 60_000 },
      (error: ServiceError | null, response?: GenerateImageResponse__Output) => {
        client.close();
        if (error) reject(error);
        else resolve(response!);
      },
    );
  });
}

describe('diffusion worker image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let modelDir: string;
  let objectDir: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-diffusion-'));
    out = join(work, 'out');
    modelDir = join(work, 'models');
    objectDir = join(work, 'objects');
    await buildTinyDiffusion(join(modelDir, 'diffusion', modelId), { seed: 0 });
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the CPU image: the worker image shape, tini as its only system package, no binary downloads', async () => {
    // sharp's binary and libvips come from npm (checked on the deployed folder below).
    const env = await assertCpuModelImage('diffusion');
    assert.equal(env.OBJECT_STORE_DIR, '/tmp/objects', 'without S3, PNGs go to the /tmp volume');
  });

  test('the CUDA variant: the same worker on a CUDA base image, with the CUDA 12 provider', async () => {
    await assertGpuVariant('diffusion');
  });

  test('pnpm deploy --prod of the diffusion worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(cpuImage, out);
    assert.ok(args.includes('{services/diffusion}'), `deploys the diffusion worker: pnpm ${args.join(' ')}`);
    assertDeployedContents(out, {
      libs: ['config', 'contracts', 'errors', 'grpc', 'models', 'objectstore', 'telemetry'],
      shipped: ['onnxruntime-node', '@huggingface/transformers', 'prom-client', 'sharp', 'zod'],
      notShipped: ['typescript', '@switchboard/models-dev', '@switchboard/devcluster'],
    });
  });

  test("sharp's prebuilt binary and libvips are in the folder and need nothing the base images lack", () => {
    assert.equal(process.platform, 'linux', 'the images are Linux (glibc) images');
    const root = realpathSync(out);
    // Resolved as sharp resolves it at run time: from its own (real) folder inside the deploy.
    const fromSharp = createRequire(realpathSync(join(out, 'node_modules', 'sharp', 'package.json')));
    const packageDir = (name: string) => {
      const manifest = realpathSync(fromSharp.resolve(`${name}/package`));
      assert.ok(manifest.startsWith(root + sep), `${name} is inside the deployed folder`);
      return join(manifest, '..');
    };
    const binaryDir = packageDir(`@img/sharp-linux-${process.arch}`);
    const binaryPackage = JSON.parse(readFileSync(join(binaryDir, 'package.json'), 'utf8')) as {
      config?: { glibc?: string };
    };
    const files = nativeFiles(binaryDir);
    assert.ok(
      files.some((f) => f.endsWith('.node')),
      `@img/sharp-linux-${process.arch} holds the addon`,
    );
    // libvips sits beside it (its package, linked from the binary's own node_modules).
    const vips = files.flatMap((f) => linkedLibraries(f)).find((l) => l.name.startsWith('libvips-cpp.so'));
    assert.ok(vips?.path, 'the addon finds libvips');
    assert.ok(
      realpathSync(vips.path).startsWith(root + sep),
      `libvips is in the deployed folder: ${vips.path}`,
    );

    const needed = new Set<string>();
    for (const file of [...files, realpathSync(vips.path)]) {
      for (const library of linkedLibraries(file)) {
        assert.ok(library.path !== null, `${basename(file)} needs ${library.name}, which is not found`);
        const inside = library.path.startsWith('/') && realpathSync(library.path).startsWith(root + sep);
        if (!inside) needed.add(basename(library.path));
      }
    }
    assert.deepEqual(
      [...needed].filter((name) => !baseImageLibrary.test(name)),
      [],
      'system libraries the base images do not have',
    );

    // The binary's glibc floor, against the base image of both variants.
    const floor = /^>=(\d+\.\d+)$/.exec(binaryPackage.config?.glibc ?? '')?.[1];
    assert.ok(floor, `@img/sharp-linux-${process.arch} declares the glibc it needs`);
    for (const { runtime } of [cpuImage, gpuImage]) {
      const base = runtime.base;
      const glibc = baseImageGlibc.find(([image]) => image.test(base))?.[1];
      assert.ok(glibc, `the glibc of ${base} is known to this test`);
      assert.ok(atLeast(glibc, floor), `${base} has glibc ${glibc}; sharp needs ${floor}`);
    }
  });

  test('the worker starts from the deployed folder, reports SERVING and stores a generated PNG', async (t) => {
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment, no S3 (so
    // OBJECT_STORE_DIR, here a temp folder rather than the image's /tmp/objects).
    const worker = await startBundledWorker(
      out,
      { MODEL_DIR: modelDir, OBJECT_STORE_DIR: objectDir, ORT_INTRA_OP_THREADS: '1' },
      t,
    );

    const result = await generateImage(worker.address, {
      prompt: 'a lighthouse at dusk',
      width: 64,
      height: 64,
      steps: 2,
      seed: 7,
    });
    assert.match(result.image_id, /^img-[0-9a-f-]{36}$/);
    assert.deepEqual(
      [result.model, result.width, result.height, result.steps, result.seed],
      [modelId, 64, 64, 2, '7'],
    );

    // What the gateway would serve: images/<id>.png in the same (local) object store.
    const stored = await new LocalObjectStore(objectDir).get(`images/${result.image_id}.png`);
    assert.ok(stored, `images/${result.image_id}.png is in the object store`);
    const png = await buffer(stored.stream);
    assert.equal(stored.contentType, 'image/png');
    assert.equal(stored.size, png.length);
    assert.deepEqual(pngSize(png), { width: 64, height: 64 });

    const metrics = await worker.metrics();
    assert.match(metrics, /process_cpu_user_seconds_total/);
    assert.match(metrics, /^diffusion_queue_depth\{service="diffusion"\} 0$/m);
    assert.match(metrics, /^diffusion_active_generations\{service="diffusion"\} 0$/m);
    assert.match(
      metrics,
      new RegExp(`^diffusion_images_total\\{model="${modelId}",outcome="ok",service="diffusion"\\} 1$`, 'm'),
    );
    assert.match(
      metrics,
      new RegExp(`^diffusion_unet_steps_total\\{model="${modelId}",service="diffusion"\\} 2$`, 'm'),
    );
    assert.match(
      metrics,
      new RegExp(`^diffusion_model_load_seconds\\{model="${modelId}",status="ready"`, 'm'),
    );

    // SIGTERM (what tini forwards) drains and exits cleanly.
    assert.equal(await worker.terminate(), 0, `exit after SIGTERM:\n${worker.output()}`);
  });
});
