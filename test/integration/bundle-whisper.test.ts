import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { credentials, type ServiceError } from '@grpc/grpc-js';
import { Whisper, type TranscribeResponse__Output } from '@switchboard/contracts';
import { clusterSecretInterceptor } from '@switchboard/grpc';
import { buildTinyWhisper } from '@switchboard/models-dev';
import { toneWav } from '../support/audio.js';
import {
  assertCpuModelImage,
  assertDeployedContents,
  assertGpuVariant,
  dockerEnv,
  runDockerDeploy,
  startBundledWorker,
} from '../support/bundle.js';
import { serviceImage } from '../support/dockerfile.js';
import { testClusterSecret } from '../support/gateway.js';

/**
 * The production install step of the whisper image (deploy/docker/Dockerfile with SERVICE=whisper:
 * `pnpm deploy --prod` of the whisper worker alone), run here into a temp folder outside the workspace; the worker is then started
 * from that folder, as the image's CMD starts it, with a MODEL_DIR holding the tiny development
 * Whisper and the image's FFMPEG_PATH. It must report SERVING and transcribe a WAV over gRPC, so
 * a file or dependency the image would miss (onnxruntime-node's binding, the tokenizer, the
 * decoder) fails here.
 */

const cpuImage = serviceImage('whisper');
const modelId = 'tiny-whisper-dev';

/** Whisper.Transcribe as the gateway calls it: options first, then the upload in chunks. */
function transcribe(address: string, audio: Buffer, language: string): Promise<TranscribeResponse__Output> {
  const client = new Whisper(address, credentials.createInsecure(), {
    interceptors: [clusterSecretInterceptor(testClusterSecret)],
  });
  return new Promise<TranscribeResponse__Output>((resolve, reject) => {
    const call = client.Transcribe(
      { deadline: Date.now() + 60_000 },
      (error: ServiceError | null, response?: TranscribeResponse__Output) => {
        client.close();
        if (error) reject(error);
        else resolve(response!);
      },
    );
    call.write({
      options: { language, format: 'json', declared_size: audio.length, filename: 'tone.wav' },
    });
    for (let at = 0; at < audio.length; at += 16 * 1024)
      call.write({ data: audio.subarray(at, at + 16 * 1024) });
    call.end();
  });
}

describe('whisper worker image contents (pnpm deploy --prod, as the image build runs it)', () => {
  let work: string;
  let out: string;
  let modelDir: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'sb-bundle-whisper-'));
    out = join(work, 'out');
    modelDir = join(work, 'models');
    await buildTinyWhisper(join(modelDir, 'whisper', modelId), { seed: 0 });
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test('the CPU image: the worker image shape, Debian ffmpeg, no binary downloads', async () => {
    const env = await assertCpuModelImage('whisper', ['ffmpeg']);
    assert.equal(env.FFMPEG_PATH, '/usr/bin/ffmpeg', "where Debian's ffmpeg package puts it");
  });

  test('the CUDA variant: the same worker and ffmpeg on a CUDA base image, with the CUDA 12 provider', async () => {
    await assertGpuVariant('whisper', ['ffmpeg']);
  });

  test('pnpm deploy --prod of the whisper worker gives a self-contained folder without dev dependencies', () => {
    const args = runDockerDeploy(cpuImage, out);
    assert.ok(args.includes('{services/whisper}'), `deploys the whisper worker: pnpm ${args.join(' ')}`);
    assertDeployedContents(out, {
      libs: ['config', 'contracts', 'errors', 'grpc', 'models', 'telemetry'],
      shipped: ['onnxruntime-node', '@huggingface/transformers', 'prom-client', 'zod'],
      notShipped: ['typescript', '@switchboard/models-dev', '@switchboard/devcluster'],
    });
  });

  test('the worker starts from the deployed folder, loads the model, reports SERVING and transcribes', async (t) => {
    const image = dockerEnv(cpuImage.runtime.lines);
    // As the image runs it: `node dist/main.js` from the app folder, a bare environment, the
    // image's ffmpeg path (the same Debian package is installed here).
    const worker = await startBundledWorker(
      out,
      { MODEL_DIR: modelDir, FFMPEG_PATH: image.FFMPEG_PATH!, ORT_INTRA_OP_THREADS: '1' },
      t,
    );

    const seconds = 1.5;
    const result = await transcribe(worker.address, toneWav(seconds), 'en');
    assert.equal(result.model, modelId);
    assert.equal(result.language, 'en');
    assert.ok(Math.abs(result.duration_s - seconds) < 0.05, `decoded ${result.duration_s} s of ${seconds} s`);

    const metrics = await worker.metrics();
    assert.match(metrics, /process_cpu_user_seconds_total/);
    assert.match(metrics, /^whisper_queue_depth\{service="whisper"\} 0$/m);
    assert.match(metrics, new RegExp(`^whisper_model_load_seconds\\{model="${modelId}",status="ready"`, 'm'));
    const audio = new RegExp(
      `^whisper_audio_seconds_total\\{model="${modelId}",service="whisper"\\} (\\S+)$`,
      'm',
    );
    assert.ok(Math.abs(Number(audio.exec(metrics)?.[1]) - seconds) < 0.05, 'the audio is counted');

    // SIGTERM (what tini forwards) drains and exits cleanly.
    assert.equal(await worker.terminate(), 0, `exit after SIGTERM:\n${worker.output()}`);
  });
});
