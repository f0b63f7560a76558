// image_encoder/model.onnx: a tiny CLIP vision transformer as Optimum exports
// CLIPVisionModelWithProjection. Input `pixel_values` float32 [batch, 3, 224, 224] (CLIP-normalised);
// outputs `image_embeds` float32 [batch, 1024] (the projected, post-LayerNorm class token: what SVD
// conditions on) and `last_hidden_state` [batch, 1 + patches, hidden].
import { Graph, attr } from '../onnx/graph.js';
import { attend, gelu, layerNorm, mergeHeads, splitHeads } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType } from '../onnx/tensor.js';
import type { Random } from '../random.js';
import { constant, linear, weight, type Params } from '../diffusion/parameters.js';
import type { VideoDiffusionShape } from './config.js';

const BATCH = 'batch_size';

interface Context extends Params {
  readonly s: VideoDiffusionShape;
}

function norm(c: Context, name: string, x: string): string {
  const h = c.s.visionHidden;
  return layerNorm(
    c.g,
    x,
    constant(c, `${name}.weight`, h, 1),
    constant(c, `${name}.bias`, h, 0),
    c.s.layerNormEps,
  );
}

function selfAttention(c: Context, prefix: string, x: string): string {
  const { visionHidden: h, visionHeads: heads } = c.s;
  const headDim = h / heads;
  const project = (name: string): string =>
    splitHeads(c.g, linear(c, `${prefix}.${name}`, x, [h, h]), heads, headDim);
  const attended = attend(c.g, project('q_proj'), project('k_proj'), project('v_proj'), headDim);
  return linear(c, `${prefix}.out_proj`, mergeHeads(c.g, attended, heads, headDim), [h, h]);
}

/** One pre-LayerNorm encoder layer: x + attention(norm(x)), then + fc2(gelu(fc1(norm(x)))). */
function encoderLayer(c: Context, i: number, x: string): string {
  const prefix = `vision_model.encoder.layers.${i}`;
  const { visionHidden: h, visionIntermediate: inner } = c.s;
  const attended = op.add(
    c.g,
    x,
    selfAttention(c, `${prefix}.self_attn`, norm(c, `${prefix}.layer_norm1`, x)),
  );
  const up = linear(c, `${prefix}.mlp.fc1`, norm(c, `${prefix}.layer_norm2`, attended), [h, inner]);
  return op.add(c.g, attended, linear(c, `${prefix}.mlp.fc2`, gelu(c.g, up), [inner, h]));
}

/** Non-overlapping patches (a stride = kernel convolution without bias) as [batch, patches, hidden]. */
function patchEmbedding(c: Context, pixels: string): string {
  const { g, s } = c;
  const k = s.patchSize;
  const w = weight(c, 'vision_model.embeddings.patch_embedding.weight', [s.visionHidden, 3, k, k], 3 * k * k);
  const [patches = ''] = g.node('Conv', [pixels, w], {
    kernel_shape: attr.ints([k, k]),
    strides: attr.ints([k, k]),
  });
  return op.transpose(g, op.reshape(g, patches, [0, 0, -1]), [0, 2, 1]);
}

export function buildImageEncoderGraph(s: VideoDiffusionShape, rng: Random): Graph {
  const g = new Graph('tiny_clip_vision_with_projection');
  const pixels = g.input('pixel_values', DataType.FLOAT, [BATCH, 3, s.imageSize, s.imageSize]);
  const c: Context = { g, rng, s };
  const h = s.visionHidden;
  const positions = 1 + (s.imageSize / s.patchSize) ** 2;

  const patches = patchEmbedding(c, pixels);
  const classToken = weight(c, 'vision_model.embeddings.class_embedding', [1, 1, h], 1);
  const [expandedClass = ''] = g.node('Expand', [
    classToken,
    op.concat(g, [op.shape(g, pixels, 0, 1), op.ints(g, [1, h])], 0),
  ]);
  const tokens = op.concat(g, [expandedClass, patches], 1); // [batch, positions, hidden]
  const positionTable = weight(
    c,
    'vision_model.embeddings.position_embedding.weight',
    [positions, h],
    1,
    0.5,
  );
  let x = norm(c, 'vision_model.pre_layrnorm', op.add(g, tokens, positionTable));
  for (let i = 0; i < s.visionLayers; i++) x = g.scope(`layers.${i}`, () => encoderLayer(c, i, x));

  const pooled = norm(c, 'vision_model.post_layernorm', op.gather(g, x, op.ints(g, 0), 1)); // [batch, hidden]
  const projection = weight(c, 'visual_projection.weight', [h, s.imageEmbedDim], h);
  g.output(op.matmul(g, pooled, projection), 'image_embeds', DataType.FLOAT, [BATCH, s.imageEmbedDim]);
  g.output(x, 'last_hidden_state', DataType.FLOAT, [BATCH, positions, h]);
  return g;
}
