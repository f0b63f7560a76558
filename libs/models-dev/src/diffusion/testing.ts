// Test support for the tiny diffusion pipeline: ONNX Runtime sessions straight from the built
// files, seeded inputs, and the summary numbers the tests compare.
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { Random } from '../random.js';

export interface PipelineSessions {
  readonly textEncoder: InferenceSession;
  readonly unet: InferenceSession;
  readonly vaeDecoder: InferenceSession;
}

export async function openSessions(files: ReadonlyMap<string, Uint8Array>): Promise<PipelineSessions> {
  const open = (part: string): Promise<InferenceSession> => {
    const bytes = files.get(`${part}/model.onnx`);
    if (bytes === undefined) throw new Error(`no ${part}/model.onnx`);
    return InferenceSession.create(bytes);
  };
  const [textEncoder, unet, vaeDecoder] = await Promise.all([
    open('text_encoder'),
    open('unet'),
    open('vae_decoder'),
  ]);
  return { textEncoder, unet, vaeDecoder };
}

/** A float32 tensor of seeded normal samples times `scale`. */
export function normalTensor(dims: readonly number[], seed: number, scale = 1): Tensor {
  const count = dims.reduce((a, b) => a * b, 1);
  return new Tensor('float32', new Random(seed).normals(count, scale), dims);
}

export const int64Tensor = (values: readonly number[]): Tensor =>
  new Tensor(
    'int64',
    BigInt64Array.from(values, (v) => BigInt(v)),
    [values.length],
  );

/** Rows of token ids as the int32 [batch, length] tensor the text encoder takes. */
export const idsTensor = (rows: readonly (readonly number[])[]): Tensor =>
  new Tensor('int32', Int32Array.from(rows.flat()), [rows.length, rows[0]?.length ?? 0]);

export const floats = (t: Tensor | undefined): Float32Array => {
  if (t?.type !== 'float32') throw new Error('expected a float32 tensor');
  return t.data as Float32Array;
};

export interface Stats {
  readonly mean: number;
  readonly std: number;
  readonly finite: boolean;
  /** Share of values at or beyond ±1 (what the worker clamps when it writes the PNG). */
  readonly clamped: number;
}

export function stats(values: Float32Array): Stats {
  let sum = 0;
  let squares = 0;
  let clamped = 0;
  let finite = true;
  for (const v of values) {
    sum += v;
    squares += v * v;
    if (Math.abs(v) >= 1) clamped++;
    if (!Number.isFinite(v)) finite = false;
  }
  const mean = sum / values.length;
  return {
    mean,
    std: Math.sqrt(squares / values.length - mean * mean),
    finite,
    clamped: clamped / values.length,
  };
}

export function meanAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`lengths differ: ${a.length} vs ${b.length}`);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
  return sum / a.length;
}
