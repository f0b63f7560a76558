// Test support for the tiny video pipeline: ONNX Runtime sessions straight from the built files,
// and slices of [batch, frames, …] outputs by frame.
import { InferenceSession, Tensor } from 'onnxruntime-node';

export interface VideoSessions {
  readonly imageEncoder: InferenceSession;
  readonly vaeEncoder: InferenceSession;
  readonly unet: InferenceSession;
  readonly vaeDecoder: InferenceSession;
}

export async function openVideoSessions(files: ReadonlyMap<string, Uint8Array>): Promise<VideoSessions> {
  const open = (part: string): Promise<InferenceSession> => {
    const bytes = files.get(`${part}/model.onnx`);
    if (bytes === undefined) throw new Error(`no ${part}/model.onnx`);
    return InferenceSession.create(bytes);
  };
  const [imageEncoder, vaeEncoder, unet, vaeDecoder] = await Promise.all([
    open('image_encoder'),
    open('vae_encoder'),
    open('unet'),
    open('vae_decoder'),
  ]);
  return { imageEncoder, vaeEncoder, unet, vaeDecoder };
}

/** A float32 tensor of `values` (a number fills it). */
export function filledTensor(dims: readonly number[], value: number): Tensor {
  const count = dims.reduce((a, b) => a * b, 1);
  return new Tensor('float32', new Float32Array(count).fill(value), dims);
}

/** Item `index` of a float tensor's outermost axis (a frame, or a batch row). */
export function item(t: Tensor | undefined, index: number): Float32Array {
  if (t?.type !== 'float32') throw new Error('expected a float32 tensor');
  const size = (t.data as Float32Array).length / (t.dims[0] ?? 1);
  return (t.data as Float32Array).subarray(index * size, (index + 1) * size);
}

/** Frame `frame` of row `row` of a [rows, frames, …] float tensor. */
export function frameOf(t: Tensor | undefined, row: number, frame: number): Float32Array {
  if (t?.type !== 'float32') throw new Error('expected a float32 tensor');
  const [rows = 1, frames = 1] = t.dims;
  const size = (t.data as Float32Array).length / (rows * frames);
  const start = (row * frames + frame) * size;
  return (t.data as Float32Array).subarray(start, start + size);
}
