// Tensor constants for initializers and Constant nodes. Data is stored as little-endian raw_data
// written through a DataView, so the bytes do not depend on the host's endianness.

/** ONNX TensorProto.DataType values used by the builders. */
export const DataType = { FLOAT: 1, INT32: 6, INT64: 7, BOOL: 9 } as const;
export type DataType = (typeof DataType)[keyof typeof DataType];

export interface TensorData {
  readonly dataType: DataType;
  readonly dims: readonly number[];
  readonly raw: Uint8Array;
}

function elementCount(dims: readonly number[]): number {
  return dims.reduce((a, b) => a * b, 1);
}

function checkCount(values: ArrayLike<unknown>, dims: readonly number[]): void {
  if (values.length !== elementCount(dims)) {
    throw new Error(`tensor has ${values.length} values but dims [${dims.join(', ')}]`);
  }
}

export function floatTensor(values: Float32Array | readonly number[], dims: readonly number[]): TensorData {
  checkCount(values, dims);
  const view = new DataView(new ArrayBuffer(values.length * 4));
  for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i] ?? 0, true);
  return { dataType: DataType.FLOAT, dims: [...dims], raw: new Uint8Array(view.buffer) };
}

export function int64Tensor(values: readonly (number | bigint)[], dims: readonly number[]): TensorData {
  checkCount(values, dims);
  const view = new DataView(new ArrayBuffer(values.length * 8));
  values.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
  return { dataType: DataType.INT64, dims: [...dims], raw: new Uint8Array(view.buffer) };
}

export function boolTensor(values: readonly boolean[], dims: readonly number[]): TensorData {
  checkCount(values, dims);
  return { dataType: DataType.BOOL, dims: [...dims], raw: Uint8Array.from(values, (v) => (v ? 1 : 0)) };
}
