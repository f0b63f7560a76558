// Building blocks shared by transformer-style models, composed from the primitives in ops.ts
// so that any ONNX Runtime (CPU, CUDA, web) runs them without contrib operators.
import type { Graph } from './graph.js';
import * as op from './ops.js';
import { DataType, floatTensor } from './tensor.js';

/** The most negative float32: masked scores become this, so a fully masked row stays finite. */
export const FLOAT32_LOWEST = -3.4028234663852886e38;

/** RMSNorm: x / sqrt(mean(x², last axis) + eps) · weight. */
export function rmsNorm(g: Graph, x: string, weight: string, eps: number): string {
  const meanSquare = op.reduceMean(g, op.mul(g, x, x), [-1]);
  const denom = op.sqrt(g, op.add(g, meanSquare, op.scalar(g, eps)));
  return op.mul(g, op.div(g, x, denom), weight);
}

/** SiLU (swish): x · sigmoid(x). */
export function silu(g: Graph, x: string): string {
  return op.mul(g, x, op.sigmoid(g, x));
}

/** Rotary tables for `positionIds` [batch, seq] (int64): cos and sin shaped [batch, 1, seq, headDim]. */
export function rotaryTables(
  g: Graph,
  positionIds: string,
  headDim: number,
  theta: number,
): { cos: string; sin: string } {
  const half = headDim / 2;
  const invFreq = Float32Array.from({ length: half }, (_, i) => 1 / theta ** ((2 * i) / headDim));
  const positions = op.unsqueeze(g, op.cast(g, positionIds, DataType.FLOAT), [-1]); // [b, s, 1]
  const freqs = op.mul(g, positions, g.constant(floatTensor(invFreq, [half]))); // [b, s, half]
  // The "rotate half" layout used by Llama checkpoints: both halves share the same frequencies.
  const angles = op.unsqueeze(g, op.concat(g, [freqs, freqs], -1), [1]); // [b, 1, s, headDim]
  return { cos: op.cos(g, angles), sin: op.sin(g, angles) };
}

/** Applies rotary position embedding to `x` [batch, heads, seq, headDim]. */
export function applyRotary(g: Graph, x: string, tables: { cos: string; sin: string }): string {
  const [x1, x2] = op.split(g, x, -1, 2);
  if (x1 === undefined || x2 === undefined) throw new Error('Split gave fewer than 2 outputs');
  const rotated = op.concat(g, [op.neg(g, x2), x1], -1);
  return op.add(g, op.mul(g, x, tables.cos), op.mul(g, rotated, tables.sin));
}

/**
 * Which keys each query may attend to, as a bool tensor [batch, 1, 1, seq, total]: key j is
 * visible to query i when j ≤ past + i (causal; the queries are the last `seq` of `total`
 * positions) and `attentionMask`[b, j] is 1 (padding). Extra unit axes broadcast over heads.
 */
export function causalPaddingMask(g: Graph, attentionMask: string, seqLen: string, extraAxes = 2): string {
  const total = op.dim(g, attentionMask, 1);
  const keyPos = op.unsqueeze(g, op.range(g, op.ints(g, 0), total), [0]); // [1, total]
  const queryPos = op.unsqueeze(g, op.range(g, op.sub(g, total, seqLen), total), [1]); // [seq, 1]
  const causal = op.lessOrEqual(g, keyPos, queryPos); // [seq, total]
  const padAxes = Array.from({ length: extraAxes + 1 }, (_, i) => i + 1);
  const padding = op.unsqueeze(g, op.cast(g, attentionMask, DataType.BOOL), padAxes); // [b, 1…, 1, total]
  return op.and(g, causal, padding);
}

/** Replaces scores where `visible` is false by the lowest float, then softmax over keys. */
export function maskedSoftmax(g: Graph, scores: string, visible: string): string {
  return op.softmax(g, op.where(g, visible, scores, op.scalar(g, FLOAT32_LOWEST)), -1);
}

/** LayerNorm over the last axis, with learned scale and bias (Whisper, BART, GPT-2). */
export function layerNorm(g: Graph, x: string, weight: string, bias: string, eps: number): string {
  return op.layerNormalization(g, x, weight, bias, eps);
}

/** Exact GELU, x · Φ(x) = x · (1 + erf(x / √2)) / 2 (the Gelu operator only arrives in opset 20). */
export function gelu(g: Graph, x: string): string {
  const cdf = op.add(g, op.erf(g, op.mul(g, x, op.scalar(g, Math.SQRT1_2))), op.scalar(g, 1));
  return op.mul(g, op.mul(g, x, cdf), op.scalar(g, 0.5));
}

/** [batch, seq, heads · headDim] → [batch, heads, seq, headDim]. */
export function splitHeads(g: Graph, x: string, heads: number, headDim: number): string {
  return op.transpose(g, op.reshape(g, x, [0, 0, heads, headDim]), [0, 2, 1, 3]);
}

/** [batch, heads, seq, headDim] → [batch, seq, heads · headDim]. */
export function mergeHeads(g: Graph, x: string, heads: number, headDim: number): string {
  return op.reshape(g, op.transpose(g, x, [0, 2, 1, 3]), [0, 0, heads * headDim]);
}

/**
 * Scaled dot-product attention over [batch, heads, seq, headDim] queries and [batch, heads, keys,
 * headDim] keys/values; `visible` (bool, broadcasting to [batch, heads, seq, keys]) masks keys.
 */
export function attend(g: Graph, q: string, k: string, v: string, headDim: number, visible?: string): string {
  const scores = op.mul(
    g,
    op.matmul(g, q, op.transpose(g, k, [0, 1, 3, 2])),
    op.scalar(g, 1 / Math.sqrt(headDim)),
  );
  const probs = visible === undefined ? op.softmax(g, scores, -1) : maskedSoftmax(g, scores, visible);
  return op.matmul(g, probs, v);
}

/**
 * Causal visibility without padding, as a bool [seq, total] tensor: the queries are the last
 * `seqLen` of `totalLen` positions, and query i sees key j when j ≤ (totalLen − seqLen) + i.
 */
export function causalMask(g: Graph, seqLen: string, totalLen: string): string {
  const keyPos = op.unsqueeze(g, op.range(g, op.ints(g, 0), totalLen), [0]); // [1, total]
  const queryPos = op.unsqueeze(g, op.range(g, op.sub(g, totalLen, seqLen), totalLen), [1]); // [seq, 1]
  return op.lessOrEqual(g, keyPos, queryPos);
}
