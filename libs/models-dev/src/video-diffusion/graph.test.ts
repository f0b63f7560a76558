// The four ONNX graphs on ONNX Runtime: the input and output names, types and shapes of the real
// exports (the UNet's are those of the TensorRT SVD release); every conditioning input of the UNet
// changes its prediction; frames mix with their neighbours only; finite, moderate values at the
// sigmas a sampler feeds them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Tensor, type InferenceSession } from 'onnxruntime-node';
import { meanAbsDiff, normalTensor, stats } from '../diffusion/testing.js';
import { tinyVideoDiffusionFiles } from './build.js';
import { filledTensor, frameOf, item, openVideoSessions } from './testing.js';

const pipeline = tinyVideoDiffusionFiles({ seed: 3 });
const sessions = openVideoSessions(pipeline.files);
const { shape } = pipeline;

const signature = (s: InferenceSession): unknown => ({
  inputs: s.inputMetadata.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : m.name)),
  outputs: s.outputMetadata.map((m) =>
    m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : m.name,
  ),
});

test('the graphs have the documented inputs and outputs', async () => {
  const { imageEncoder, vaeEncoder, unet, vaeDecoder } = await sessions;
  assert.deepEqual(signature(imageEncoder), {
    inputs: [{ name: 'pixel_values', type: 'float32', shape: ['batch_size', 3, 224, 224] }],
    outputs: [
      { name: 'image_embeds', type: 'float32', shape: ['batch_size', 1024] },
      { name: 'last_hidden_state', type: 'float32', shape: ['batch_size', 50, shape.visionHidden] },
    ],
  });
  assert.deepEqual(signature(vaeEncoder), {
    inputs: [{ name: 'sample', type: 'float32', shape: ['batch_size', 3, 'height', 'width'] }],
    outputs: [{ name: 'latent_sample', type: 'float32', shape: ['batch_size', 4, 'height/8', 'width/8'] }],
  });
  assert.deepEqual(signature(unet), {
    inputs: [
      { name: 'sample', type: 'float32', shape: ['2B', 'num_frames', 8, 'H', 'W'] },
      { name: 'timestep', type: 'float32', shape: [1] },
      { name: 'encoder_hidden_states', type: 'float32', shape: ['2B', 1, 1024] },
      { name: 'added_time_ids', type: 'float32', shape: ['2B', 3] },
    ],
    outputs: [{ name: 'latent', type: 'float32', shape: ['2B', 'num_frames', 4, 'H', 'W'] }],
  });
  assert.deepEqual(signature(vaeDecoder), {
    inputs: [{ name: 'latent_sample', type: 'float32', shape: ['num_frames', 4, 'height', 'width'] }],
    outputs: [{ name: 'sample', type: 'float32', shape: ['num_frames', 3, '8*height', '8*width'] }],
  });
});

test('image encoder: one 1024-wide embedding per image, different for different images', async () => {
  const { imageEncoder } = await sessions;
  const out = await imageEncoder.run({ pixel_values: normalTensor([2, 3, 224, 224], 1) });
  assert.deepEqual(out['image_embeds']?.dims, [2, 1024]);
  const [a, b] = [item(out['image_embeds'], 0), item(out['image_embeds'], 1)];
  assert.ok(stats(a).finite && stats(a).std > 0.1, JSON.stringify(stats(a)));
  assert.ok(meanAbsDiff(a, b) > 0.05);
});

test('VAE encoder: ÷8 latents of any multiple-of-8 size, depending on the image', async () => {
  const { vaeEncoder } = await sessions;
  const run = async (seed: number) =>
    (await vaeEncoder.run({ sample: normalTensor([1, 3, 64, 128], seed, 0.5) }))['latent_sample'];
  const [a, b] = [await run(1), await run(2)];
  assert.deepEqual(a?.dims, [1, 4, 8, 16]);
  assert.ok(stats(item(a, 0)).finite && meanAbsDiff(item(a, 0), item(b, 0)) > 0.05);
});

/** Feeds of a guided pass: row 0 unconditional (zero embedding), row 1 conditional. */
const sigmaTimestep = (sigma: number): Tensor =>
  new Tensor('float32', Float32Array.of(0.25 * Math.log(sigma)), [1]);
const timeIds = (fps: number, motion: number, aug: number): Tensor =>
  new Tensor('float32', Float32Array.of(fps, motion, aug, fps, motion, aug), [2, 3]);
const dims = [2, shape.framesPerPass, 8, 8, 8];
const baseFeeds = {
  sample: normalTensor(dims, 7),
  timestep: sigmaTimestep(10),
  encoder_hidden_states: normalTensor([2, 1, 1024], 8),
  added_time_ids: timeIds(23, 127, 0.02),
};
type Feeds = typeof baseFeeds;

async function predict(changes: Partial<Feeds> = {}): Promise<Tensor> {
  const { unet } = await sessions;
  const out = (await unet.run({ ...baseFeeds, ...changes }))['latent'];
  assert.ok(out);
  return out;
}

test('UNet: [2B, frames, 4, H, W] for any batch, frame count and latent size', async () => {
  const { unet } = await sessions;
  for (const d of [
    [2, 8, 8, 8, 8],
    [1, 3, 8, 8, 16],
    [2, 14, 8, 9, 5],
  ]) {
    const rows = d[0]!;
    const out = await unet.run({
      sample: normalTensor(d, 1),
      timestep: sigmaTimestep(700),
      encoder_hidden_states: normalTensor([rows, 1, 1024], 2),
      added_time_ids: new Tensor('float32', new Float32Array(rows * 3).fill(5), [rows, 3]),
    });
    assert.deepEqual(out['latent']?.dims, [d[0], d[1], 4, d[3], d[4]]);
    assert.ok(stats(out['latent']?.data as Float32Array).finite);
  }
});

test('UNet: the prediction depends on the timestep, the image embedding, the added time ids and the image latents', async () => {
  const base = await predict();
  const row1 = (t: Tensor): Float32Array => item(t, 1);
  assert.ok(meanAbsDiff(row1(base), row1(await predict({ timestep: sigmaTimestep(2) }))) > 0.01);
  assert.ok(
    meanAbsDiff(row1(base), row1(await predict({ encoder_hidden_states: normalTensor([2, 1, 1024], 9) }))) >
      0.01,
  );
  assert.ok(
    meanAbsDiff(row1(base), row1(await predict({ added_time_ids: timeIds(5, 127, 0.02) }))) > 0.01,
    'fps',
  );
  assert.ok(
    meanAbsDiff(row1(base), row1(await predict({ added_time_ids: timeIds(23, 30, 0.02) }))) > 0.01,
    'motion',
  );
  // Only the image-latent half of the sample (channels 4–7) changes.
  const sample = Float32Array.from(baseFeeds.sample.data as Float32Array);
  const frameSize = 8 * 8 * 8;
  for (let i = 0; i < sample.length; i++) if (i % frameSize >= frameSize / 2) sample[i] = 0;
  assert.ok(
    meanAbsDiff(row1(base), row1(await predict({ sample: new Tensor('float32', sample, dims) }))) > 0.01,
  );
  // Rows are independent: the unconditional row does not see the conditional row's embedding.
  const zeroEmbedding = await predict({ encoder_hidden_states: filledTensor([2, 1, 1024], 0) });
  assert.ok(meanAbsDiff(item(base, 0), item(zeroEmbedding, 0)) > 0.01);
});

test('UNet: a frame mixes with its neighbours (two temporal layers), not with distant frames', async () => {
  const base = await predict();
  const sample = Float32Array.from(baseFeeds.sample.data as Float32Array);
  const frameSize = sample.length / (2 * shape.framesPerPass);
  for (let i = 0; i < frameSize; i++) sample[i] = -sample[i]!; // row 0, frame 0
  const changed = await predict({ sample: new Tensor('float32', sample, dims) });
  assert.ok(meanAbsDiff(frameOf(base, 0, 1), frameOf(changed, 0, 1)) > 1e-3, 'frame 1 sees frame 0');
  assert.ok(
    meanAbsDiff(frameOf(base, 0, 2), frameOf(changed, 0, 2)) > 1e-5,
    'frame 2 sees it through frame 1',
  );
  assert.ok(meanAbsDiff(frameOf(base, 0, 7), frameOf(changed, 0, 7)) < 1e-7, 'frame 7 does not');
  assert.ok(meanAbsDiff(item(base, 1), item(changed, 1)) < 1e-7, 'the other row does not');
});

test("UNet: the scheduler's denoised estimate αx − s·v is finite and moderate from σ = 700 to σ = 0.002", async () => {
  for (const sigma of [700, 10, 0.002]) {
    const alpha = 1 / Math.sqrt(sigma * sigma + 1);
    const v = (await predict({ timestep: sigmaTimestep(sigma) })).data as Float32Array;
    const x = baseFeeds.sample.data as Float32Array;
    const frameSize = 4 * 8 * 8;
    const denoised = v.map((value, i) => {
      const frame = Math.floor(i / frameSize);
      return alpha * x[frame * 2 * frameSize + (i % frameSize)]! - sigma * alpha * value;
    });
    const s = stats(denoised);
    assert.ok(s.finite && s.std > 0.05 && s.std < 5, `σ ${sigma}: ${JSON.stringify(s)}`);
  }
});

test('temporal VAE decoder: ×8 frames of any latent size, pixels mostly inside [−1, 1], neighbours mixed', async () => {
  const { vaeDecoder } = await sessions;
  const latents = normalTensor([8, 4, 8, 8], 1, 1 / shape.scalingFactor);
  const out = (await vaeDecoder.run({ latent_sample: latents }))['sample'];
  assert.deepEqual(out?.dims, [8, 3, 64, 64]);
  const s = stats(out?.data as Float32Array);
  assert.ok(s.finite && s.std > 0.1 && s.std < 0.6 && s.clamped < 0.05, JSON.stringify(s));
  const other = Float32Array.from(latents.data as Float32Array);
  for (let i = 0; i < other.length / 8; i++) other[i] = -other[i]!; // frame 0
  const changed = (await vaeDecoder.run({ latent_sample: new Tensor('float32', other, [8, 4, 8, 8]) }))[
    'sample'
  ];
  assert.ok(meanAbsDiff(item(out, 1), item(changed, 1)) > 1e-3, 'frame 1 sees frame 0');
  assert.ok(meanAbsDiff(item(out, 2), item(changed, 2)) < 1e-7, 'frame 2 does not');
  const wide = (await vaeDecoder.run({ latent_sample: normalTensor([3, 4, 8, 16], 2, 5) }))['sample'];
  assert.deepEqual(wide?.dims, [3, 3, 64, 128]);
});
