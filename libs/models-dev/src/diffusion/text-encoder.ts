// text_encoder/model.onnx: a CLIP text transformer as Optimum exports CLIPTextModel. Input
// `input_ids` int32 [batch, sequence]; outputs `last_hidden_state` [batch, sequence, hidden] (what
// the UNet attends to) and `pooler_output` [batch, hidden], the final state at each row's first
// `<|endoftext|>` (the largest id, so ArgMax finds it, as CLIP's pooling does).
import { Graph, attr } from '../onnx/graph.js';
import { attend, causalMask, layerNorm, mergeHeads, splitHeads } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import type { DiffusionShape } from './config.js';
import { constant, linear, weight, type Params } from './parameters.js';

const BATCH = 'batch_size';
const SEQUENCE = 'sequence_length';

interface Context extends Params {
  readonly s: DiffusionShape;
  /** Causal visibility [sequence, sequence]: CLIP's text model never looks ahead. */
  readonly visible: string;
}

function norm(c: Context, name: string, x: string): string {
  const h = c.s.textHidden;
  return layerNorm(
    c.g,
    x,
    constant(c, `${name}.weight`, h, 1),
    constant(c, `${name}.bias`, h, 0),
    c.s.layerNormEps,
  );
}

function selfAttention(c: Context, prefix: string, x: string): string {
  const { textHidden: h, textHeads: heads } = c.s;
  const headDim = h / heads;
  const project = (name: string): string =>
    splitHeads(c.g, linear(c, `${prefix}.${name}`, x, [h, h]), heads, headDim);
  const attended = attend(c.g, project('q_proj'), project('k_proj'), project('v_proj'), headDim, c.visible);
  return linear(c, `${prefix}.out_proj`, mergeHeads(c.g, attended, heads, headDim), [h, h]);
}

/** CLIP's MLP: fc2(quick_gelu(fc1(x))), quick_gelu(x) = x · sigmoid(1.702 x). */
function mlp(c: Context, prefix: string, x: string): string {
  const { textHidden: h, textIntermediate: inner } = c.s;
  const up = linear(c, `${prefix}.fc1`, x, [h, inner]);
  const act = op.mul(c.g, up, op.sigmoid(c.g, op.mul(c.g, up, op.scalar(c.g, 1.702))));
  return linear(c, `${prefix}.fc2`, act, [inner, h]);
}

/** One pre-LayerNorm encoder layer: x + attention(norm(x)), then + mlp(norm(x)). */
function encoderLayer(c: Context, i: number, x: string): string {
  const prefix = `text_model.encoder.layers.${i}`;
  const attended = op.add(
    c.g,
    x,
    selfAttention(c, `${prefix}.self_attn`, norm(c, `${prefix}.layer_norm1`, x)),
  );
  return op.add(c.g, attended, mlp(c, `${prefix}.mlp`, norm(c, `${prefix}.layer_norm2`, attended)));
}

/** The hidden state at each row's argmax id: a one-hot row per batch item, times the states. */
function poolAtEos(g: Graph, inputIds: string, hidden: string, seqLen: string): string {
  const [eosAt = ''] = g.node('ArgMax', [inputIds], { axis: attr.int(1), keepdims: attr.int(1) }); // [b, 1]
  const positions = op.unsqueeze(g, op.range(g, op.ints(g, 0), seqLen), [0]); // [1, seq]
  const oneHot = op.cast(g, op.equal(g, positions, eosAt), DataType.FLOAT); // [b, seq]
  return op.squeeze(g, op.matmul(g, op.unsqueeze(g, oneHot, [1]), hidden), [1]); // [b, hidden]
}

export function buildTextEncoderGraph(s: DiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_clip_text_encoder');
  const inputIds = g.input('input_ids', DataType.INT32, [BATCH, SEQUENCE]);
  const seqLen = op.dim(g, inputIds, 1);
  const c: Context = { g, rng, s, visible: g.scope('mask', () => causalMask(g, seqLen, seqLen)) };

  // Token embeddings at unit scale and smaller position embeddings: the prompt, not the position,
  // should dominate each state, so different prompts give clearly different conditioning.
  const tokens = weight(c, 'text_model.embeddings.token_embedding.weight', [s.vocabSize, s.textHidden], 1);
  const positionTable = [s.maxPositions, s.textHidden];
  const positions = weight(c, 'text_model.embeddings.position_embedding.weight', positionTable, 1, 0.5);
  const positionIds = op.range(g, op.ints(g, 0), seqLen);
  let x = op.add(g, op.gather(g, tokens, inputIds), op.gather(g, positions, positionIds));
  for (let i = 0; i < s.textLayers; i++) x = g.scope(`layers.${i}`, () => encoderLayer(c, i, x));
  const last = norm(c, 'text_model.final_layer_norm', x);

  g.output(last, 'last_hidden_state', DataType.FLOAT, [BATCH, SEQUENCE, s.textHidden]);
  g.output(poolAtEos(g, inputIds, last, seqLen), 'pooler_output', DataType.FLOAT, [BATCH, s.textHidden]);
  return g;
}
