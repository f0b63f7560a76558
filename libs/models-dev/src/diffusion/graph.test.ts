// The three ONNX graphs on ONNX Runtime: the input and output names, types and shapes the
// diffusers ONNX layout uses; spatial sizes free (including odd ones); every input of the UNet
// changes its prediction; finite, unsaturated values at the scales a sampler feeds them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferenceSession } from 'onnxruntime-node';
import { tinyDiffusionFiles } from './build.js';
import { floats, idsTensor, int64Tensor, meanAbsDiff, normalTensor, openSessions, stats } from './testing.js';

const pipeline = tinyDiffusionFiles({ seed: 3 });
const { shape, ids } = pipeline;
const sessions = openSessions(pipeline.files);

const signature = (s: InferenceSession): unknown => ({
  inputs: s.inputMetadata.map((m) => (m.isTensor ? { name: m.name, type: m.type, shape: m.shape } : m.name)),
  outputs: s.outputNames,
});

/** A 77-token row: BOS, the given ids, EOS, then EOS as padding (as the CLIP tokenizer pads). */
const row = (...text: number[]): number[] => {
  const r = [ids.bos, ...text, ids.eos];
  return [...r, ...Array<number>(77 - r.length).fill(ids.pad)];
};

test('the graphs have the documented inputs and outputs', async () => {
  const { textEncoder, unet, vaeDecoder } = await sessions;
  assert.deepEqual(signature(textEncoder), {
    inputs: [{ name: 'input_ids', type: 'int32', shape: ['batch_size', 'sequence_length'] }],
    outputs: ['last_hidden_state', 'pooler_output'],
  });
  assert.deepEqual(signature(unet), {
    inputs: [
      { name: 'sample', type: 'float32', shape: ['batch_size', 4, 'height', 'width'] },
      { name: 'timestep', type: 'int64', shape: ['steps'] },
      { name: 'encoder_hidden_states', type: 'float32', shape: ['batch_size', 'sequence_length', 32] },
    ],
    outputs: ['out_sample'],
  });
  assert.deepEqual(signature(vaeDecoder), {
    inputs: [{ name: 'latent_sample', type: 'float32', shape: ['batch_size', 4, 'height', 'width'] }],
    outputs: ['sample'],
  });
});

test('text encoder: causal states per token, pooled at the first EOS, different for other prompts', async () => {
  const { textEncoder } = await sessions;
  const out = await textEncoder.run({ input_ids: idsTensor([row(300, 301), row(400, 401, 402)]) });
  assert.deepEqual(out['last_hidden_state']?.dims, [2, 77, shape.textHidden]);
  assert.deepEqual(out['pooler_output']?.dims, [2, shape.textHidden]);
  const states = floats(out['last_hidden_state']);
  const pooled = floats(out['pooler_output']);
  const h = shape.textHidden;
  const at = (batch: number, pos: number): Float32Array =>
    states.subarray((batch * 77 + pos) * h, (batch * 77 + pos + 1) * h);
  assert.deepEqual(pooled.subarray(0, h), at(0, 3), 'row 0 pools at its EOS (position 3)');
  assert.deepEqual(pooled.subarray(h), at(1, 4), 'row 1 pools at its EOS (position 4)');
  // BOS sees only itself, so its state is the same in both rows; later states see the prompt.
  assert.ok(meanAbsDiff(at(0, 0), at(1, 0)) < 1e-6);
  assert.ok(meanAbsDiff(at(0, 1), at(1, 1)) > 0.1);
  assert.ok(meanAbsDiff(at(0, 40), at(1, 40)) > 0.01, 'padding states carry the prompt too');
  const s = stats(states);
  assert.ok(s.finite && Math.abs(s.std - 1) < 0.05, `final LayerNorm gives unit scale: ${JSON.stringify(s)}`);
});

test('UNet: any latent size in, the same size out', async () => {
  const { textEncoder, unet } = await sessions;
  const context = (await textEncoder.run({ input_ids: idsTensor([row(300), row(301)]) }))[
    'last_hidden_state'
  ];
  assert.ok(context);
  for (const [height, width] of [
    [64, 64],
    [64, 128],
    [9, 5],
  ] as const) {
    const dims = [2, 4, height, width];
    const out: InferenceSession.ReturnType = await unet.run({
      sample: normalTensor(dims, 1),
      timestep: int64Tensor([501]),
      encoder_hidden_states: context,
    });
    assert.deepEqual(out['out_sample']?.dims, dims);
    assert.ok(stats(floats(out['out_sample'])).finite);
  }
});

test('UNet: the prediction depends on the sample, the timestep and the text; its correction is moderate', async () => {
  const { textEncoder, unet } = await sessions;
  const encode = async (a: number, b: number) =>
    (await textEncoder.run({ input_ids: idsTensor([row(a), row(b)]) }))['last_hidden_state']!;
  const [context, otherContext] = await Promise.all([encode(300, 310), encode(400, 410)]);
  const dims = [2, 4, 32, 32];
  const sample = normalTensor(dims, 1);
  const predict = async (feeds: Partial<Record<'sample' | 'timestep' | 'encoder_hidden_states', unknown>>) =>
    floats(
      (
        await unet.run({
          sample,
          timestep: int64Tensor([501]),
          encoder_hidden_states: context,
          ...(feeds as Record<string, never>),
        })
      )['out_sample'],
    );
  const base = await predict({});
  const correction = base.map((v, i) => v - (floats(sample)[i] ?? 0));
  const c = stats(correction);
  assert.ok(c.finite && c.std > 0.05 && c.std < 1, `correction ${JSON.stringify(c)}`);
  assert.ok(meanAbsDiff(base, await predict({ sample: normalTensor(dims, 2) })) > 0.5);
  assert.ok(meanAbsDiff(base, await predict({ timestep: int64Tensor([21]) })) > 0.02);
  assert.ok(meanAbsDiff(base, await predict({ encoder_hidden_states: otherContext })) > 0.02);
  // One timestep per batch item (steps = batch) works too: each half follows its own.
  const perItem = await predict({ timestep: int64Tensor([501, 21]) });
  const half = base.length / 2;
  assert.ok(meanAbsDiff(base.subarray(0, half), perItem.subarray(0, half)) < 1e-6, 'item 0 keeps t = 501');
  assert.ok(meanAbsDiff(base.subarray(half), perItem.subarray(half)) > 0.02, 'item 1 gets t = 21');
});

test('VAE decoder: ×8 upsampling of any latent size; varied pixels, mostly inside [−1, 1]', async () => {
  const { vaeDecoder } = await sessions;
  const outputs: Float32Array[] = [];
  for (const [height, width, seed] of [
    [32, 32, 1],
    [32, 64, 1],
    [32, 32, 2],
  ] as const) {
    // Latents as the worker hands them over: unit-scale latents divided by the scaling factor.
    const latent = normalTensor([1, 4, height, width], seed, 1 / shape.scalingFactor);
    const image = (await vaeDecoder.run({ latent_sample: latent }))['sample'];
    assert.deepEqual(image?.dims, [1, 3, height * 8, width * 8]);
    const s = stats(floats(image));
    assert.ok(s.finite && s.std > 0.15 && s.std < 0.6 && s.clamped < 0.05, JSON.stringify(s));
    outputs.push(floats(image));
  }
  const [first, , otherSeed] = outputs;
  assert.ok(first && otherSeed && meanAbsDiff(first, otherSeed) > 0.1, 'other latents, another image');
});
