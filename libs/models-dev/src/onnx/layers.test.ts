// The building blocks run in a real ONNX Runtime session and are checked against plain
// JavaScript references, so a wrong axis or formula fails here rather than deep in a model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { Graph } from './graph.js';
import {
  applyRotary,
  attend,
  causalMask,
  causalPaddingMask,
  gelu,
  layerNorm,
  rmsNorm,
  rotaryTables,
} from './layers.js';
import * as op from './ops.js';
import { serializeModel } from './serialize.js';
import { DataType, floatTensor } from './tensor.js';

async function session(g: Graph): Promise<InferenceSession> {
  return InferenceSession.create(serializeModel(g));
}

const int64 = (values: number[], dims: number[]): Tensor =>
  new Tensor(
    'int64',
    BigInt64Array.from(values, (v) => BigInt(v)),
    dims,
  );

function close(actual: ArrayLike<number>, expected: ArrayLike<number>, tol = 1e-5): void {
  assert.equal(actual.length, expected.length);
  for (let i = 0; i < actual.length; i++) {
    assert.ok(
      Math.abs(Number(actual[i]) - Number(expected[i])) <= tol,
      `at ${i}: ${actual[i]} vs ${expected[i]}`,
    );
  }
}

test('rmsNorm matches x / sqrt(mean(x²) + eps) · w', async () => {
  const g = new Graph('rms');
  const x = g.input('x', DataType.FLOAT, ['batch_size', 4]);
  const w = g.initializer('w', floatTensor([1, 2, 3, 4], [4]));
  g.output(rmsNorm(g, x, w, 1e-5), 'y', DataType.FLOAT, ['batch_size', 4]);
  const data = [1, -2, 3, 0.5, 0, 0, 0, 1e-3];
  const { y } = await (await session(g)).run({ x: new Tensor('float32', Float32Array.from(data), [2, 4]) });
  const expected = [0, 1].flatMap((r) => {
    const row = data.slice(r * 4, r * 4 + 4);
    const rms = Math.sqrt(row.reduce((a, v) => a + v * v, 0) / 4 + 1e-5);
    return row.map((v, i) => (v / rms) * (i + 1));
  });
  assert.deepEqual(y?.dims, [2, 4]);
  close(y?.data as Float32Array, expected);
});

test('applyRotary rotates each (i, i + d/2) pair by position · θ^(-2i/d)', async () => {
  const d = 4;
  const g = new Graph('rope');
  const x = g.input('x', DataType.FLOAT, ['batch_size', 1, 'sequence_length', d]);
  const pos = g.input('position_ids', DataType.INT64, ['batch_size', 'sequence_length']);
  g.output(applyRotary(g, x, rotaryTables(g, pos, d, 100)), 'y', DataType.FLOAT, [
    'batch_size',
    1,
    'sequence_length',
    d,
  ]);
  const data = [1, 2, 3, 4, 0.5, -1, 2, 0];
  const positions = [3, 7];
  const { y } = await (
    await session(g)
  ).run({
    x: new Tensor('float32', Float32Array.from(data), [1, 1, 2, d]),
    position_ids: int64(positions, [1, 2]),
  });
  const expected = positions.flatMap((p, s) => {
    const v = data.slice(s * d, s * d + d);
    const out = new Array<number>(d);
    for (let i = 0; i < d / 2; i++) {
      const angle = p / 100 ** ((2 * i) / d);
      const [a = 0, b = 0] = [v[i], v[i + d / 2]];
      out[i] = a * Math.cos(angle) - b * Math.sin(angle);
      out[i + d / 2] = b * Math.cos(angle) + a * Math.sin(angle);
    }
    return out;
  });
  close(y?.data as Float32Array, expected, 1e-4);
});

test('causalPaddingMask: query i sees key j when j ≤ past + i and the key is not padding', async () => {
  const g = new Graph('mask');
  const mask = g.input('attention_mask', DataType.INT64, ['batch_size', 'total_sequence_length']);
  const ids = g.input('input_ids', DataType.INT64, ['batch_size', 'sequence_length']);
  const visible = causalPaddingMask(g, mask, op.dim(g, ids, 1), 0);
  g.output(visible, 'visible', DataType.BOOL, ['batch_size', 'sequence_length', 'total_sequence_length']);
  // total 4 (past 2, current 2); the second row's first key is padding.
  const { visible: out } = await (
    await session(g)
  ).run({
    attention_mask: int64([1, 1, 1, 1, 0, 1, 1, 1], [2, 4]),
    input_ids: int64([0, 0, 0, 0], [2, 2]),
  });
  assert.deepEqual(out?.dims, [2, 2, 4]);
  const expected = [1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 0, 0, 1, 1, 1];
  assert.deepEqual(Array.from(out?.data as Uint8Array, Number), expected);
});

test('layerNorm matches (x − mean) / sqrt(var + eps) · w + b over the last axis', async () => {
  const g = new Graph('ln');
  const x = g.input('x', DataType.FLOAT, ['batch_size', 4]);
  const w = g.initializer('w', floatTensor([1, 2, 3, 4], [4]));
  const b = g.initializer('b', floatTensor([0, 0.5, 0, -1], [4]));
  g.output(layerNorm(g, x, w, b, 1e-5), 'y', DataType.FLOAT, ['batch_size', 4]);
  const data = [1, -2, 3, 0.5, 2, 2, 2, 2.5];
  const { y } = await (await session(g)).run({ x: new Tensor('float32', Float32Array.from(data), [2, 4]) });
  const expected = [0, 1].flatMap((r) => {
    const row = data.slice(r * 4, r * 4 + 4);
    const mean = row.reduce((a, v) => a + v, 0) / 4;
    const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / 4;
    return row.map((v, i) => ((v - mean) / Math.sqrt(variance + 1e-5)) * (i + 1) + [0, 0.5, 0, -1][i]!);
  });
  close(y?.data as Float32Array, expected, 1e-4);
});

test('gelu is the exact x · Φ(x)', async () => {
  const g = new Graph('gelu');
  const x = g.input('x', DataType.FLOAT, [5]);
  g.output(gelu(g, x), 'y', DataType.FLOAT, [5]);
  const data = [-3, -1, 0, 0.5, 2];
  const { y } = await (await session(g)).run({ x: new Tensor('float32', Float32Array.from(data), [5]) });
  // Φ from the known values of erf: erf(−3/√2) = −0.99730020, erf(−1/√2) = −0.68268949, …
  const erf = [-0.9973002, -0.68268949, 0, 0.38292492, 0.95449974];
  close(
    y?.data as Float32Array,
    data.map((v, i) => 0.5 * v * (1 + erf[i]!)),
    1e-5,
  );
});

test('causalMask and attend: query i of the last `seq` sees keys j ≤ past + i, weighted by softmax(q·k/√d)', async () => {
  const g = new Graph('attend');
  const q = g.input('q', DataType.FLOAT, [1, 1, 'sequence_length', 2]);
  const k = g.input('k', DataType.FLOAT, [1, 1, 'total_sequence_length', 2]);
  const v = g.input('v', DataType.FLOAT, [1, 1, 'total_sequence_length', 2]);
  const visible = causalMask(g, op.dim(g, q, 2), op.dim(g, k, 2));
  g.output(visible, 'visible', DataType.BOOL, ['sequence_length', 'total_sequence_length']);
  g.output(attend(g, q, k, v, 2, visible), 'y', DataType.FLOAT, [1, 1, 'sequence_length', 2]);
  const qs = [1, 0, 0, 1];
  const ks = [1, 0, 0, 1, 1, 1];
  const vs = [1, 2, 3, 4, 5, 6];
  const out = await (
    await session(g)
  ).run({
    q: new Tensor('float32', Float32Array.from(qs), [1, 1, 2, 2]),
    k: new Tensor('float32', Float32Array.from(ks), [1, 1, 3, 2]),
    v: new Tensor('float32', Float32Array.from(vs), [1, 1, 3, 2]),
  });
  assert.deepEqual(Array.from(out['visible']?.data as Uint8Array, Number), [1, 1, 0, 1, 1, 1]);
  const expected = [0, 1].flatMap((i) => {
    const keys = i + 2; // past 1: query 0 sees keys 0–1, query 1 sees keys 0–2
    const scores = Array.from(
      { length: keys },
      (_, j) => (qs[2 * i]! * ks[2 * j]! + qs[2 * i + 1]! * ks[2 * j + 1]!) / Math.SQRT2,
    );
    const z = scores.reduce((a, sc) => a + Math.exp(sc), 0);
    return [0, 1].map((c) => scores.reduce((a, sc, j) => a + (Math.exp(sc) / z) * vs[2 * j + c]!, 0));
  });
  close(out['y']?.data as Float32Array, expected, 1e-5);
});
