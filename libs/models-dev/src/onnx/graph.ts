// A small, general ONNX graph builder: named inputs/outputs with symbolic dims, initializers,
// nodes with typed attributes. Every generated name comes from a counter, so building the same
// graph twice gives the same names in the same order (and so byte-identical files).
import type { IAttributeProto, IGraphProto, INodeProto, ITensorProto, IValueInfoProto } from './proto.js';
import { onnx } from './proto.js';
import type { DataType, TensorData } from './tensor.js';

/** A dimension: a fixed size, or a symbolic name (`batch_size`, `sequence_length`, …). */
export type Dim = number | string;

/** Attribute values carry their ONNX type explicitly: a float 1.0 must never become an int. */
export type Attr =
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'ints'; readonly value: readonly number[] }
  | { readonly kind: 'floats'; readonly value: readonly number[] }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'tensor'; readonly value: TensorData };

export const attr = {
  int: (value: number): Attr => ({ kind: 'int', value }),
  float: (value: number): Attr => ({ kind: 'float', value }),
  ints: (value: readonly number[]): Attr => ({ kind: 'ints', value }),
  floats: (value: readonly number[]): Attr => ({ kind: 'floats', value }),
  string: (value: string): Attr => ({ kind: 'string', value }),
  tensor: (value: TensorData): Attr => ({ kind: 'tensor', value }),
};

const AttrType = onnx.AttributeProto.AttributeType;

function attributeProto(name: string, a: Attr): IAttributeProto {
  switch (a.kind) {
    case 'int':
      return { name, type: AttrType.INT, i: a.value };
    case 'float':
      return { name, type: AttrType.FLOAT, f: a.value };
    case 'ints':
      return { name, type: AttrType.INTS, ints: [...a.value] };
    case 'floats':
      return { name, type: AttrType.FLOATS, floats: [...a.value] };
    case 'string':
      return { name, type: AttrType.STRING, s: new TextEncoder().encode(a.value) };
    case 'tensor':
      return { name, type: AttrType.TENSOR, t: tensorProto('', a.value) };
  }
}

export function tensorProto(name: string, t: TensorData): ITensorProto {
  return { name, dataType: t.dataType, dims: [...t.dims], rawData: t.raw };
}

function valueInfo(name: string, elemType: DataType, dims: readonly Dim[]): IValueInfoProto {
  const dim = dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d }));
  return { name, type: { tensorType: { elemType, shape: { dim } } } };
}

export class Graph {
  private readonly inputs: IValueInfoProto[] = [];
  private readonly outputs: IValueInfoProto[] = [];
  private readonly initializers: ITensorProto[] = [];
  private readonly nodes: INodeProto[] = [];
  private readonly names = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly scopes: string[] = [];

  constructor(readonly name: string) {}

  /** Declares a graph input and returns its name for use in nodes. */
  input(name: string, elemType: DataType, dims: readonly Dim[]): string {
    this.claim(name);
    this.inputs.push(valueInfo(name, elemType, dims));
    return name;
  }

  /**
   * Declares `value` as the graph output `name`. When the value already has another name, an
   * Identity node gives it the public one, so ops never need to know their output names.
   */
  output(value: string, name: string, elemType: DataType, dims: readonly Dim[]): void {
    if (value !== name) {
      this.claim(name);
      this.nodes.push({ name: `${name}/Identity`, opType: 'Identity', input: [value], output: [name] });
    }
    this.outputs.push(valueInfo(name, elemType, dims));
  }

  /** A named initializer (weights keep their conventional names, e.g. `model.norm.weight`). */
  initializer(name: string, t: TensorData): string {
    this.claim(name);
    this.initializers.push(tensorProto(name, t));
    return name;
  }

  /** An anonymous constant (shapes, axes, scalars), stored as an initializer. */
  constant(t: TensorData): string {
    return this.initializer(this.fresh('const'), t);
  }

  /** Adds a node and returns the names of its `outputs` fresh output values. */
  node(opType: string, inputs: readonly string[], attrs: Record<string, Attr> = {}, outputs = 1): string[] {
    const nodeName = this.fresh(opType);
    const output = Array.from({ length: outputs }, (_, i) => this.claim(`${nodeName}_output_${i}`));
    const attribute = Object.entries(attrs).map(([k, v]) => attributeProto(k, v));
    this.nodes.push({ name: nodeName, opType, input: [...inputs], output, attribute });
    return output;
  }

  /** Runs `fn` with `prefix` added to generated names, so a graph dump reads like the model. */
  scope<T>(prefix: string, fn: () => T): T {
    this.scopes.push(prefix);
    try {
      return fn();
    } finally {
      this.scopes.pop();
    }
  }

  toProto(): IGraphProto {
    return {
      name: this.name,
      input: this.inputs,
      output: this.outputs,
      initializer: this.initializers,
      node: this.nodes,
    };
  }

  private fresh(base: string): string {
    const key = [...this.scopes, base].join('/');
    const n = this.counters.get(key) ?? 0;
    this.counters.set(key, n + 1);
    return `/${key}_${n}`;
  }

  private claim(name: string): string {
    if (this.names.has(name)) throw new Error(`duplicate value name ${name}`);
    this.names.add(name);
    return name;
  }
}
