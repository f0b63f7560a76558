import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { connect, RetentionPolicy } from 'nats';
import { parse } from 'yaml';
import { startNats, type NatsHandle } from '@switchboard/devcluster';
import { jobNames } from '@switchboard/jobs';
import {
  assertCpuModelImage,
  assertDeployedContents,
  assertGpuVariant,
  dockerEnv,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { getPath } from '../support/helm-checks.js';
import { chartDir } from '../support/helm.js';

/**
 * The production install step of the animation image (deploy/docker/Dockerfile with
 * SERVICE=animation: `pnpm deploy --prod` of the animation worker alone), run here into a temp folder outside the workspace; the worker is then
 * started from that folder, as the image's CMD starts it, against a real NATS with JetStream and
 * the image's ffmpeg paths (Debian's ffmpeg package, installed here too). It serves the avatar
 * back-end, which needs no model (the vendor is called only for a job), so it must report SERVING,
 * leave the work queue the chart's KEDA triggers watch in NATS (stream and per-back-end consumers),
 * describe its back-end for the gateway, export its metrics and exit cleanly on SIGTERM. A file or
 * dependency the image would miss (the NATS client, the job library, the object store, a back-end's
 * module) fails here.
 */

const cpuImage = serviceImage('animation');

describe('animation worker image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let nats: NatsHandle;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-animation-'));
    out = join(work, 'out');
    nats = await startNats();
  });

  after(async () => {
    await nats?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the CPU image: the worker image shape, Debian ffmpeg (ffmpeg and ffprobe), no binary downloads', async () => {
    const env = await assertCpuModelImage('animation', ['ffmpeg']);
    assert.equal(env.ANIMATION_FFMPEG_PATH, '/usr/bin/ffmpeg', "where Debian's ffmpeg package puts it");
    assert.equal(env.ANIMATION_FFPROBE_PATH, '/usr/bin/ffprobe', 'the same package');
    assert.equal(env.OBJECT_STORE_DIR, '/tmp/objects', 'without S3, inputs and MP4s go to the /tmp volume');
  });

  test('the CUDA variant: the same worker and ffmpeg on a CUDA base image, with the CUDA 12 provider', async () => {
    await assertGpuVariant('animation', ['ffmpeg']);
  });

  test('pnpm deploy --prod of the animation worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(cpuImage, out);
    assert.ok(args.includes('{services/animation}'), `deploys the animation worker: pnpm ${args.join(' ')}`);
    assertDeployedContents(out, {
      libs: ['config', 'errors', 'events', 'grpc', 'jobs', 'models', 'objectstore', 'telemetry'],
      shipped: ['onnxruntime-node', 'nats', 'prom-client', 'zod'],
      notShipped: ['typescript', '@switchboard/models-dev', '@switchboard/devcluster'],
    });
  });

  test("the worker starts from the deployed folder, leaves the chart's work queue in NATS, reports SERVING and stops cleanly", async (t) => {
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment, the image's
    // ffmpeg paths, no S3 (so OBJECT_STORE_DIR, here a temp folder rather than the image's
    // /tmp/objects). The avatar back-end as the chart configures it: its vendor URL and key.
    const image = dockerEnv(cpuImage.runtime.lines);
    const [objects, models] = [join(work, 'objects'), join(work, 'models')];
    for (const dir of [objects, models]) mkdirSync(dir, { recursive: true });
    const worker = await startBundledWorker(
      out,
      {
        ...nats.env('animation'),
        OBJECT_STORE_DIR: objects,
        MODEL_DIR: models,
        ANIMATION_FFMPEG_PATH: image.ANIMATION_FFMPEG_PATH!,
        ANIMATION_FFPROBE_PATH: image.ANIMATION_FFPROBE_PATH!,
        ANIMATION_BACKENDS: 'avatar',
        AVATAR_BASE_URL: 'https://api.d-id.com',
        AVATAR_API_KEY: 'bundle-test-avatar-key',
      },
      t,
    );

    // The stream and consumers the chart's KEDA triggers name (values.yaml) exist, whichever of
    // the gateway and the workers started first: here the worker made them.
    const nc = await connect(nats.connectOptions('operator'));
    t.after(() => nc.close());
    const jsm = await nc.jetstreamManager();
    const values = parse(readFileSync(join(chartDir, 'values.yaml'), 'utf8')) as unknown;
    const stream = getPath(values, 'animation.autoscaling.trigger.stream') as string;
    const consumers = getPath(values, 'animation.autoscaling.trigger.consumers') as Record<string, string>;
    assert.equal((await jsm.streams.info(stream)).config.retention, RetentionPolicy.Workqueue);
    for (const consumer of Object.values(consumers)) {
      const info = await jsm.consumers.info(stream, consumer);
      assert.equal(info.config.durable_name, consumer);
    }

    // It told the gateway (the back-ends bucket) that its avatar back-end is configured.
    const kv = await nc.jetstream().views.kv(jobNames().backendsBucket, { bindOnly: true });
    let described: { configured?: boolean } | undefined;
    for (let i = 0; i < 50 && !described; i++) {
      const entry = await kv.get('avatar');
      if (entry?.value.length) described = JSON.parse(entry.string()) as { configured?: boolean };
      else await delay(100);
    }
    assert.equal(described?.configured, true, `the avatar back-end's description:\n${worker.output()}`);

    const metrics = await worker.metrics();
    assert.match(metrics, /^process_cpu_user_seconds_total\{service="animation"\} /m);

    // SIGTERM (what tini forwards) stops taking jobs and exits cleanly.
    assert.equal(await worker.terminate(), 0, `exit after SIGTERM:\n${worker.output()}`);
  });
});
