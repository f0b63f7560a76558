// ONNX Runtime sessions for the portrait models, and what the worker reads from their own
// metadata: tensor names, element types and sizes. Exports differ in names and output order
// (TensorRT-converted sets list `kp` first), so nothing here trusts a position.
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { transformersDeviceOptions, type ExecutionConfig } from '@switchboard/models';

/**
 * Each session has its own intra-op thread pool, whose threads spin for a while after a run. A
 * frame runs four sessions one after another, so spinning pools of the sessions just used take
 * the cores from the one running: measured on 2 cores, the warping model took 184 ms a frame with
 * spinning and 52 ms without.
 */
const NO_SPINNING = { session: { intra_op: { allow_spinning: '0' } } };

export async function openSession(path: string, execution: ExecutionConfig): Promise<InferenceSession> {
  const { session_options } = transformersDeviceOptions(execution);
  try {
    return await InferenceSession.create(path, { ...session_options, extra: NO_SPINNING });
  } catch (error) {
    throw new Error(`cannot open ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
}

export interface TensorInfo {
  readonly name: string;
  readonly shape: readonly (number | string)[];
}

function tensorInfo(
  metadata: readonly InferenceSession.ValueMetadata[],
  name: string,
  what: string,
): TensorInfo {
  const meta = metadata.find((m) => m.name === name);
  if (meta === undefined) throw new Error(`${what} has no tensor "${name}"`);
  if (!meta.isTensor || meta.type !== 'float32')
    throw new Error(`${what}: "${name}" is not a float32 tensor`);
  return { name, shape: meta.shape };
}

export const inputInfo = (session: InferenceSession, name: string, what: string): TensorInfo =>
  tensorInfo(session.inputMetadata, name, `${what} input`);

export const outputInfo = (session: InferenceSession, name: string, what: string): TensorInfo =>
  tensorInfo(session.outputMetadata, name, `${what} output`);

/** The model's one input or output (stitching, appearance: their names differ between exports). */
export function onlyInput(session: InferenceSession, what: string): TensorInfo {
  const [name, ...rest] = session.inputNames;
  if (name === undefined || rest.length > 0) throw new Error(`${what} must have exactly one input`);
  return inputInfo(session, name, what);
}

export function onlyOutput(session: InferenceSession, what: string): TensorInfo {
  const [name, ...rest] = session.outputNames;
  if (name === undefined || rest.length > 0) throw new Error(`${what} must have exactly one output`);
  return outputInfo(session, name, what);
}

/** A fixed size of `info`'s axis `axis` (negative from the end), or `fallback` for a symbolic one. */
export function fixedDim(info: TensorInfo, axis: number, fallback: number): number {
  const dim = info.shape.at(axis);
  return typeof dim === 'number' && dim > 0 ? dim : fallback;
}

export function floatOutput(outputs: InferenceSession.ReturnType, name: string): Tensor {
  const tensor = outputs[name];
  if (tensor?.type !== 'float32') throw new Error(`missing float32 output "${name}"`);
  return tensor;
}

export const floatData = (outputs: InferenceSession.ReturnType, name: string): Float32Array =>
  floatOutput(outputs, name).data as Float32Array;

export const floatTensor = (data: Float32Array, dims: readonly number[]): Tensor =>
  new Tensor('float32', data, dims);
