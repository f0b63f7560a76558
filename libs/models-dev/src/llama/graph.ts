// The ONNX graph of a Llama-family causal decoder, with the input and output names of the
// Hugging Face Optimum export that Transformers.js loads (`onnx/model.onnx`, KV cache in and out).
// Weights are [in, out] matrices so every projection is a plain MatMul.
import { Graph, type Dim } from '../onnx/graph.js';
import {
  applyRotary,
  causalPaddingMask,
  maskedSoftmax,
  rmsNorm,
  rotaryTables,
  silu,
} from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { checkShape, type LlamaShape } from './config.js';

/** Symbolic dim names: Transformers.js sizes empty past tensors by these (batch_size → batch, others → 0). */
export const DIMS = {
  batch: 'batch_size',
  sequence: 'sequence_length',
  past: 'past_sequence_length',
  total: 'total_sequence_length',
} as const;

interface Context {
  readonly g: Graph;
  readonly s: LlamaShape;
  readonly rng: Random;
  readonly rope: { cos: string; sin: string };
  readonly visible: string;
}

export interface LlamaGraphOptions {
  /** Multiplies lm_head's initial scale: the logits' standard deviation is about this. */
  readonly logitScale?: number;
}

export function buildLlamaGraph(s: LlamaShape, rng: Random, options: LlamaGraphOptions = {}): Graph {
  checkShape(s);
  const g = new Graph('tiny_llama');
  const { batch, sequence, past, total } = DIMS;
  const inputIds = g.input('input_ids', DataType.INT64, [batch, sequence]);
  const attentionMask = g.input('attention_mask', DataType.INT64, [batch, total]);
  const positionIds = g.input('position_ids', DataType.INT64, [batch, sequence]);
  const cacheDims = (len: string): Dim[] => [batch, s.kvHeads, len, s.headDim];
  const pasts = Array.from({ length: s.layers }, (_, i) => ({
    key: g.input(`past_key_values.${i}.key`, DataType.FLOAT, cacheDims(past)),
    value: g.input(`past_key_values.${i}.value`, DataType.FLOAT, cacheDims(past)),
  }));

  // Unit-variance embeddings and 1/√fan_in projections keep every activation near unit scale,
  // so logits are finite and varied rather than flat or saturated.
  const embed = weight(g, rng, 'model.embed_tokens.weight', [s.vocabSize, s.hiddenSize], 1);
  const ctx: Context = {
    g,
    s,
    rng,
    rope: g.scope('rotary', () => rotaryTables(g, positionIds, s.headDim, s.ropeTheta)),
    visible: g.scope('mask', () => causalPaddingMask(g, attentionMask, op.dim(g, inputIds, 1), 2)),
  };

  let x = op.gather(g, embed, inputIds); // [b, s, hidden]
  const presents = pasts.map((p, i) => {
    const layer = g.scope(`layers.${i}`, () => decoderLayer(ctx, i, x, p));
    x = layer.hidden;
    return layer;
  });
  const normed = rmsNorm(g, x, ones(g, 'model.norm.weight', s.hiddenSize), s.rmsNormEps);
  const logitScale = options.logitScale ?? 1;
  const lmHead = weight(
    g,
    rng,
    'lm_head.weight',
    [s.hiddenSize, s.vocabSize],
    logitScale / Math.sqrt(s.hiddenSize),
  );
  // Outputs in the order of Optimum exports: logits, then present.<i>.key/value per layer.
  g.output(op.matmul(g, normed, lmHead), 'logits', DataType.FLOAT, [batch, sequence, s.vocabSize]);
  presents.forEach((layer, i) => {
    g.output(layer.key, `present.${i}.key`, DataType.FLOAT, cacheDims(total));
    g.output(layer.value, `present.${i}.value`, DataType.FLOAT, cacheDims(total));
  });
  return g;
}

function decoderLayer(
  ctx: Context,
  i: number,
  x: string,
  past: { key: string; value: string },
): { hidden: string; key: string; value: string } {
  const { g, s } = ctx;
  const prefix = `model.layers.${i}`;
  const attnIn = rmsNorm(g, x, ones(g, `${prefix}.input_layernorm.weight`, s.hiddenSize), s.rmsNormEps);
  const attn = g.scope('self_attn', () => attention(ctx, `${prefix}.self_attn`, attnIn, past));
  const h = op.add(g, x, attn.out);
  const mlpIn = rmsNorm(
    g,
    h,
    ones(g, `${prefix}.post_attention_layernorm.weight`, s.hiddenSize),
    s.rmsNormEps,
  );
  const mlpOut = g.scope('mlp', () => mlp(ctx, `${prefix}.mlp`, mlpIn));
  return { hidden: op.add(g, h, mlpOut), key: attn.key, value: attn.value };
}

function attention(
  ctx: Context,
  prefix: string,
  x: string,
  past: { key: string; value: string },
): { out: string; key: string; value: string } {
  const { g, s, rng } = ctx;
  const { heads, kvHeads, headDim: d, hiddenSize } = s;
  const group = heads / kvHeads;
  const proj = (name: string, outDim: number): string =>
    op.matmul(
      g,
      x,
      weight(g, rng, `${prefix}.${name}.weight`, [hiddenSize, outDim], 1 / Math.sqrt(hiddenSize)),
    );
  // [b, s, n·d] → [b, n, s, d]
  const split = (t: string, n: number): string =>
    op.transpose(g, op.reshape(g, t, [0, 0, n, d]), [0, 2, 1, 3]);

  const q = applyRotary(g, split(proj('q_proj', heads * d), heads), ctx.rope);
  const k = applyRotary(g, split(proj('k_proj', kvHeads * d), kvHeads), ctx.rope);
  const v = split(proj('v_proj', kvHeads * d), kvHeads);
  const key = op.concat(g, [past.key, k], 2); // [b, kv, total, d]
  const value = op.concat(g, [past.value, v], 2);

  // Grouped-query attention: query head h belongs to kv head ⌊h / group⌋ (as HF's repeat_kv).
  // Queries are viewed as [b, kv, group, s, d] and keys/values as [b, kv, 1, total, d]; MatMul
  // broadcasting then repeats each kv head across its group without copying it.
  const qg = op.reshape(g, q, [0, kvHeads, group, -1, d]);
  const kT = op.transpose(g, op.unsqueeze(g, key, [2]), [0, 1, 2, 4, 3]);
  const scores = op.mul(g, op.matmul(g, qg, kT), op.scalar(g, 1 / Math.sqrt(d))); // [b, kv, group, s, total]
  const probs = maskedSoftmax(g, scores, ctx.visible);
  const attended = op.matmul(g, probs, op.unsqueeze(g, value, [2])); // [b, kv, group, s, d]
  const perHead = op.transpose(g, op.reshape(g, attended, [0, heads, -1, d]), [0, 2, 1, 3]); // [b, s, h, d]
  const merged = op.reshape(g, perHead, [0, 0, heads * d]);
  const wo = weight(g, rng, `${prefix}.o_proj.weight`, [heads * d, hiddenSize], 1 / Math.sqrt(heads * d));
  return { out: op.matmul(g, merged, wo), key, value };
}

/** SwiGLU feed-forward: down(silu(gate(x)) · up(x)). */
function mlp(ctx: Context, prefix: string, x: string): string {
  const { g, s, rng } = ctx;
  const w = (name: string, dims: [number, number]): string =>
    weight(g, rng, `${prefix}.${name}.weight`, dims, 1 / Math.sqrt(dims[0]));
  const gate = op.matmul(g, x, w('gate_proj', [s.hiddenSize, s.intermediateSize]));
  const up = op.matmul(g, x, w('up_proj', [s.hiddenSize, s.intermediateSize]));
  return op.matmul(g, op.mul(g, silu(g, gate), up), w('down_proj', [s.intermediateSize, s.hiddenSize]));
}

function weight(g: Graph, rng: Random, name: string, dims: readonly number[], std: number): string {
  const count = dims.reduce((a, b) => a * b, 1);
  return g.initializer(name, floatTensor(rng.normals(count, std), dims));
}

function ones(g: Graph, name: string, size: number): string {
  return g.initializer(name, floatTensor(new Float32Array(size).fill(1), [size]));
}
