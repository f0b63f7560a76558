// The text decoder, `onnx/decoder_model_merged.onnx`, with the input and output names of the
// Optimum "merged" export that Transformers.js feeds for Whisper. It has no `use_cache_branch`
// input and no If node: Transformers.js passes that flag only when the session declares it, so
// this one graph serves the first step (empty past) and every later step alike. Cross-attention
// keys/values are recomputed from `encoder_hidden_states` at every step — cheap at this size —
// and still returned as `present.<i>.encoder.*`, which Transformers.js keeps and feeds back as
// `past_key_values.<i>.encoder.*` (declared, and ignored by the graph).
import { Graph, type Dim } from '../onnx/graph.js';
import { causalMask } from '../onnx/layers.js';
import * as op from '../onnx/ops.js';
import { DataType, floatTensor } from '../onnx/tensor.js';
import { normalWeight } from '../onnx/weights.js';
import type { Random } from '../random.js';
import { attentionOutput, keysValues, mlp, norm, residual, type BlockContext } from './blocks.js';
import { checkShape, type WhisperShape } from './config.js';
import { structurePrior, type StructureIds } from './logits-prior.js';

/** Symbolic dims. Transformers.js sizes empty past tensors from these: batch_size → batch, others → 0. */
export const DECODER_DIMS = {
  batch: 'batch_size',
  sequence: 'decoder_sequence_length',
  past: 'past_decoder_sequence_length',
  total: 'total_decoder_sequence_length',
  encoder: 'encoder_sequence_length',
  encoderPast: 'encoder_sequence_length_out',
} as const;

export interface DecoderWeights {
  /** Token embeddings [vocab, dModel], also the output projection (tied, as in Whisper). */
  readonly embedTokens: Float32Array;
  /** Added to the logits with the structure prior; see logits-prior.ts for why. */
  readonly finalLogitsBias: Float32Array;
  readonly ids: StructureIds;
  /** Position of the prompt's last token (logits-prior.ts's PROMPT_END unless English-only). */
  readonly promptEnd?: number;
}

export function buildDecoderGraph(s: WhisperShape, rng: Random, weights: DecoderWeights): Graph {
  checkShape(s);
  const g = new Graph('tiny_whisper_decoder');
  const { batch, sequence, past, total, encoder, encoderPast } = DECODER_DIMS;
  const d = s.dModel;
  const headDim = d / s.decoderHeads;
  const c: BlockContext = { g, rng, dModel: d, heads: s.decoderHeads, eps: s.layerNormEps };
  const cacheDims = (len: string): Dim[] => [batch, s.decoderHeads, len, headDim];

  const inputIds = g.input('input_ids', DataType.INT64, [batch, sequence]);
  const encoderStates = g.input('encoder_hidden_states', DataType.FLOAT, [batch, encoder, d]);
  const pasts = Array.from({ length: s.decoderLayers }, (_, i) => {
    const name = (kind: string): string => `past_key_values.${i}.${kind}`;
    const self = {
      key: g.input(name('decoder.key'), DataType.FLOAT, cacheDims(past)),
      value: g.input(name('decoder.value'), DataType.FLOAT, cacheDims(past)),
    };
    g.input(name('encoder.key'), DataType.FLOAT, cacheDims(encoderPast));
    g.input(name('encoder.value'), DataType.FLOAT, cacheDims(encoderPast));
    return self;
  });
  const [firstPast] = pasts;
  if (firstPast === undefined) throw new Error('the decoder needs at least one layer');

  const embed = g.initializer(
    'model.decoder.embed_tokens.weight',
    floatTensor(weights.embedTokens, [s.vocabSize, d]),
  );
  const positionTable = normalWeight(
    g,
    rng,
    'model.decoder.embed_positions.weight',
    [s.maxTargetPositions, d],
    1 / Math.sqrt(d),
  );
  // The new tokens sit at positions past … past + seq − 1.
  const seqLen = op.dim(g, inputIds, 1);
  const pastLen = op.dim(g, firstPast.key, 2);
  const totalLen = op.add(g, pastLen, seqLen);
  const positions = op.range(g, pastLen, totalLen); // [seq]
  let x = op.add(g, op.gather(g, embed, inputIds), op.gather(g, positionTable, positions)); // [b, seq, d]
  const visible = g.scope('mask', () => causalMask(g, seqLen, totalLen)); // [seq, total]

  const presents = pasts.map((p, i) => {
    const prefix = `model.decoder.layers.${i}`;
    return g.scope(`layers.${i}`, () => {
      // Self-attention over the cached keys/values followed by the new ones.
      const h = norm(c, `${prefix}.self_attn_layer_norm`, x);
      const fresh = keysValues(c, `${prefix}.self_attn`, h);
      const self = {
        key: op.concat(g, [p.key, fresh.key], 2),
        value: op.concat(g, [p.value, fresh.value], 2),
      };
      x = op.add(g, x, attentionOutput(c, `${prefix}.self_attn`, h, self, visible));
      const cross = keysValues(c, `${prefix}.encoder_attn`, encoderStates);
      x = residual(c, `${prefix}.encoder_attn_layer_norm`, x, (h) =>
        attentionOutput(c, `${prefix}.encoder_attn`, h, cross),
      );
      x = residual(c, `${prefix}.final_layer_norm`, x, (h) => mlp(c, prefix, h, s.decoderFfnDim));
      return { self, cross };
    });
  });

  const normed = norm(c, 'model.decoder.layer_norm', x);
  const bias = g.initializer('final_logits_bias', floatTensor(weights.finalLogitsBias, [s.vocabSize]));
  const prior = g.scope('prior', () =>
    structurePrior(g, inputIds, positions, encoderStates, weights.ids, weights.promptEnd),
  );
  const logits = op.add(g, op.add(g, op.matmul(g, normed, op.transpose(g, embed, [1, 0])), bias), prior);
  // Outputs in the order of Optimum exports: logits, then per layer decoder.key/value, encoder.key/value.
  g.output(logits, 'logits', DataType.FLOAT, [batch, sequence, s.vocabSize]);
  presents.forEach(({ self, cross }, i) => {
    g.output(self.key, `present.${i}.decoder.key`, DataType.FLOAT, cacheDims(total));
    g.output(self.value, `present.${i}.decoder.value`, DataType.FLOAT, cacheDims(total));
    g.output(cross.key, `present.${i}.encoder.key`, DataType.FLOAT, cacheDims(encoder));
    g.output(cross.value, `present.${i}.encoder.value`, DataType.FLOAT, cacheDims(encoder));
  });
  return g;
}
