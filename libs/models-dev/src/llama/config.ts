// The shape of a tiny Llama-family decoder and the `config.json` that describes it to
// Transformers.js (which reads model_type, the head counts, head_dim and the token ids).
import { DEV_MODEL_MARKER } from '../marker.js';

export interface LlamaShape {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly maxPositions: number;
  readonly rmsNormEps: number;
  readonly ropeTheta: number;
}

export interface SpecialTokenIds {
  readonly bos: number;
  readonly eos: number;
  readonly pad: number;
}

export { DEV_MODEL_MARKER };

export function checkShape(s: LlamaShape): void {
  const positive = Object.entries(s).filter(([, v]) => !(typeof v === 'number' && v > 0));
  if (positive.length > 0) throw new Error(`not positive: ${positive.map(([k]) => k).join(', ')}`);
  if (s.heads % s.kvHeads !== 0) throw new Error('heads must be a multiple of kvHeads');
  if (s.headDim % 2 !== 0) throw new Error('headDim must be even (rotary embedding)');
}

export function llamaConfigJson(s: LlamaShape, ids: SpecialTokenIds, seed: number): object {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: s.hiddenSize,
    intermediate_size: s.intermediateSize,
    num_hidden_layers: s.layers,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kvHeads,
    head_dim: s.headDim,
    vocab_size: s.vocabSize,
    max_position_embeddings: s.maxPositions,
    hidden_act: 'silu',
    rms_norm_eps: s.rmsNormEps,
    rope_theta: s.ropeTheta,
    rope_scaling: null,
    attention_bias: false,
    mlp_bias: false,
    tie_word_embeddings: false,
    use_cache: true,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    pad_token_id: ids.pad,
    torch_dtype: 'float32',
    [DEV_MODEL_MARKER]: {
      description:
        'Tiny random-weight development model built by @switchboard/models-dev; its output is noise.',
      seed,
    },
  };
}

export function generationConfigJson(ids: SpecialTokenIds): object {
  return { bos_token_id: ids.bos, eos_token_id: ids.eos, pad_token_id: ids.pad, do_sample: false };
}
