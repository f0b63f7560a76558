// The tiny portrait graphs as ONNX Runtime sees them: exactly the published set's tensor names,
// dtypes and shapes (and ours for audio2motion), the warping model's 5-D GridSample at opset 20
// running on the CPU, and outputs that behave as the worker relies on: pixels in [0, 1], keypoint
// motion moving them, silence giving no motion, one motion frame per 640 samples.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { onnx } from '../onnx/proto.js';
import { floats, meanAbsDiff, normalTensor } from '../diffusion/testing.js';
import { tinyPortraitFiles } from './build.js';
import { PORTRAIT_FILES } from './config.js';

type Shape = readonly (number | string)[];
interface Contract {
  readonly inputs: Readonly<Record<string, Shape>>;
  readonly outputs: Readonly<Record<string, Shape>>;
}

const IMG = { img: [1, 3, 256, 256] };
const CONTRACT: Readonly<Record<string, Contract>> = {
  [PORTRAIT_FILES.appearance]: { inputs: IMG, outputs: { output: [1, 32, 16, 64, 64] } },
  [PORTRAIT_FILES.motion]: {
    inputs: IMG,
    outputs: {
      pitch: [1, 66],
      yaw: [1, 66],
      roll: [1, 66],
      t: [1, 3],
      exp: [1, 63],
      scale: [1, 1],
      kp: [1, 63],
    },
  },
  [PORTRAIT_FILES.stitching]: { inputs: { input: [1, 126] }, outputs: { output: [1, 65] } },
  [PORTRAIT_FILES.stitchingEye]: { inputs: { input: [1, 66] }, outputs: { output: [1, 63] } },
  [PORTRAIT_FILES.stitchingLip]: { inputs: { input: [1, 65] }, outputs: { output: [1, 63] } },
  [PORTRAIT_FILES.warping]: {
    inputs: { feature_3d: [1, 32, 16, 64, 64], kp_driving: [1, 21, 3], kp_source: [1, 21, 3] },
    outputs: { out: [1, 3, 512, 512] },
  },
  [PORTRAIT_FILES.audioModel]: {
    inputs: { audio: ['batch_size', 'samples'] },
    outputs: {
      exp: ['batch_size', 'frames', 63],
      pose: ['batch_size', 'frames', 3],
      t: ['batch_size', 'frames', 3],
      scale: ['batch_size', 'frames', 1],
    },
  },
};

const { files } = tinyPortraitFiles({ seed: 3 });
const open = (path: string, options: InferenceSession.SessionOptions = {}): Promise<InferenceSession> =>
  InferenceSession.create(files.get(path) ?? new Uint8Array(), options);
const described = (metadata: readonly InferenceSession.ValueMetadata[]) =>
  Object.fromEntries(metadata.map((m) => [m.name, m.isTensor ? [m.type, [...m.shape]] : ['non-tensor']]));

test('every graph declares exactly the published names, order, float32 dtypes and shapes', async () => {
  for (const [path, contract] of Object.entries(CONTRACT)) {
    const session = await open(path);
    const expect = (io: Readonly<Record<string, Shape>>) =>
      Object.fromEntries(Object.entries(io).map(([name, shape]) => [name, ['float32', [...shape]]]));
    assert.deepEqual(described(session.inputMetadata), expect(contract.inputs), `${path} inputs`);
    assert.deepEqual(described(session.outputMetadata), expect(contract.outputs), `${path} outputs`);
    assert.deepEqual(session.inputNames, Object.keys(contract.inputs), `${path} input order`);
    assert.deepEqual(session.outputNames, Object.keys(contract.outputs), `${path} output order`);
    await session.release();
  }
});

test('the warping model samples the 5-D feature volume with GridSample at opset 20', () => {
  const model = onnx.ModelProto.decode(files.get(PORTRAIT_FILES.warping) ?? new Uint8Array());
  assert.deepEqual(
    model.opsetImport.map((o) => [o.domain, Number(o.version)]),
    [['', 20]],
  );
  const samplers = (model.graph?.node ?? []).filter((n) => n.opType === 'GridSample');
  assert.equal(samplers.length, 1);
  assert.equal(samplers[0]?.input?.[0], 'feature_3d', 'samples the 5-D input itself');
  const mode = samplers[0]?.attribute?.find((a) => a.name === 'mode');
  assert.equal(Buffer.from(mode?.s ?? []).toString(), 'linear');
});

test('ONNX Runtime runs the chain on the CPU: pixels in [0, 1], keypoint motion moves them', async () => {
  const [appearance, motion, warping] = await Promise.all([
    open(PORTRAIT_FILES.appearance),
    open(PORTRAIT_FILES.motion),
    open(PORTRAIT_FILES.warping),
  ]);
  const img = new Tensor(
    'float32',
    floats(normalTensor([1, 3, 256, 256], 7, 0.2)).map((v) => 0.5 + v),
    [1, 3, 256, 256],
  );
  const feature = (await appearance.run({ img })).output;
  const info = await motion.run({ img });
  const kp = floats(info.kp);
  assert.ok(
    kp.every((v) => Math.abs(v) < 2),
    'canonical keypoints within the grid',
  );
  assert.ok(Math.abs((floats(info.scale)[0] ?? 0) - 1) < 0.2, 'scale near 1');

  const source = new Tensor('float32', kp, [1, 21, 3]);
  const moved = new Tensor(
    'float32',
    kp.map((v, i) => (i % 3 === 0 ? v + 0.15 : v)),
    [1, 21, 3],
  );
  const warp = async (driving: Tensor) =>
    floats((await warping.run({ feature_3d: feature!, kp_driving: driving, kp_source: source })).out);
  const still = await warp(source);
  assert.equal(still.length, 3 * 512 * 512);
  assert.ok(
    still.every((v) => v >= 0 && v <= 1),
    'a sigmoid keeps pixels in [0, 1]',
  );
  assert.deepEqual(await warp(source), still, 'deterministic');
  assert.ok(meanAbsDiff(await warp(moved), still) > 1e-4, 'moving the keypoints changes the picture');
});

test('audio2motion: one motion frame per 640 samples; silence is no motion; sound moves', async () => {
  // Fatal-only logging: the last case fails on purpose and ONNX Runtime would print it.
  const session = await open(PORTRAIT_FILES.audioModel, { logSeverityLevel: 4 });
  const run = (samples: Float32Array) =>
    session.run({ audio: new Tensor('float32', samples, [1, samples.length]) });
  const silent = await run(new Float32Array(640 * 3));
  assert.deepEqual(silent.exp?.dims, [1, 3, 63]);
  assert.ok(floats(silent.exp).every((v) => v === 0));
  assert.ok(floats(silent.pose).every((v) => v === 0));
  assert.ok(floats(silent.scale).every((v) => v === 1));
  const tone = Float32Array.from(
    { length: 640 * 5 },
    (_, i) => 0.5 * Math.sin((2 * Math.PI * 220 * i) / 16000),
  );
  const moving = await run(tone);
  assert.deepEqual(moving.pose?.dims, [1, 5, 3]);
  assert.ok(
    floats(moving.pose).some((v) => Math.abs(v) > 0.01),
    'a tone turns the head a little',
  );
  assert.ok(floats(moving.pose).every((v) => Math.abs(v) <= 5));
  await assert.rejects(run(new Float32Array(1000)), /reshape|Reshape/i, 'not a whole number of frames');
});
