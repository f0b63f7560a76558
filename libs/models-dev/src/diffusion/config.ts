// The shape of the tiny Stable-Diffusion-style pipeline and the JSON files that describe it in
// the diffusers ONNX layout: model_index.json at the top, a config.json per ONNX component.
// The worker reads model_index.json (its components) and vae_decoder/config.json (scaling
// factor, latent channels, and the ×8 scale factor from block_out_channels' length).
import { DEV_MODEL_MARKER } from '../marker.js';
import type { SchedulerKind } from './scheduler.js';

/** The diffusers release whose file layout and config keys these files follow. */
export const DIFFUSERS_VERSION = '0.30.0';

export interface DiffusionShape {
  readonly vocabSize: number;
  /** CLIP's context length: prompts are padded or cut to 77 tokens. */
  readonly maxPositions: number;
  readonly textHidden: number;
  readonly textLayers: number;
  readonly textHeads: number;
  readonly textIntermediate: number;
  readonly latentChannels: number;
  /** UNet channels at the latent resolution and at ÷2 and ÷4 (where cross-attention runs). */
  readonly unetChannels: readonly [number, number];
  readonly unetHeads: number;
  /** Width of the sinusoidal timestep features and of the time embedding MLP. */
  readonly timeFeatures: number;
  readonly timeEmbedDim: number;
  /** The VAE's block_out_channels in diffusers' (encoder) order; the decoder walks them reversed. */
  readonly vaeChannels: readonly number[];
  readonly normGroups: number;
  readonly layerNormEps: number;
  readonly scalingFactor: number;
}

export interface ClipTokenIds {
  readonly bos: number;
  readonly eos: number;
  readonly pad: number;
}

const marker = (seed: number): object => ({
  [DEV_MODEL_MARKER]: {
    description:
      'Tiny random-weight development model built by @switchboard/models-dev; its images are noise.',
    seed,
  },
});

/** model_index.json of an OnnxStableDiffusionPipeline; [null, null] marks an absent component. */
export function modelIndexJson(scheduler: SchedulerKind, seed: number): object {
  const onnx = ['diffusers', 'OnnxRuntimeModel'];
  return {
    _class_name: 'OnnxStableDiffusionPipeline',
    _diffusers_version: DIFFUSERS_VERSION,
    feature_extractor: [null, null],
    requires_safety_checker: false,
    safety_checker: [null, null],
    scheduler: ['diffusers', scheduler === 'ddim' ? 'DDIMScheduler' : 'EulerDiscreteScheduler'],
    text_encoder: onnx,
    tokenizer: ['transformers', 'CLIPTokenizer'],
    unet: onnx,
    vae_decoder: onnx,
    vae_encoder: [null, null],
    ...marker(seed),
  };
}

/** text_encoder/config.json: a CLIPTextModel (no projection head; pooler_output is the EOS state). */
export function textEncoderConfigJson(s: DiffusionShape, ids: ClipTokenIds): object {
  return {
    architectures: ['CLIPTextModel'],
    model_type: 'clip_text_model',
    vocab_size: s.vocabSize,
    hidden_size: s.textHidden,
    intermediate_size: s.textIntermediate,
    num_hidden_layers: s.textLayers,
    num_attention_heads: s.textHeads,
    max_position_embeddings: s.maxPositions,
    projection_dim: s.textHidden,
    hidden_act: 'quick_gelu',
    layer_norm_eps: s.layerNormEps,
    attention_dropout: 0,
    initializer_factor: 1,
    initializer_range: 0.02,
    bos_token_id: ids.bos,
    eos_token_id: ids.eos,
    pad_token_id: ids.pad,
    torch_dtype: 'float32',
  };
}

/** unet/config.json: what a UNet2DConditionModel config says about inputs and conditioning. */
export function unetConfigJson(s: DiffusionShape): object {
  const vaeScale = 2 ** (s.vaeChannels.length - 1);
  return {
    _class_name: 'UNet2DConditionModel',
    _diffusers_version: DIFFUSERS_VERSION,
    in_channels: s.latentChannels,
    out_channels: s.latentChannels,
    sample_size: 512 / vaeScale,
    block_out_channels: s.unetChannels,
    down_block_types: ['DownBlock2D', 'CrossAttnDownBlock2D'],
    up_block_types: ['CrossAttnUpBlock2D', 'UpBlock2D'],
    layers_per_block: 1,
    cross_attention_dim: s.textHidden,
    attention_head_dim: s.unetChannels[1] / s.unetHeads,
    norm_num_groups: s.normGroups,
    act_fn: 'silu',
    flip_sin_to_cos: true,
    freq_shift: 0,
  };
}

/** vae_decoder/config.json: an AutoencoderKL config (the decoder half is exported). */
export function vaeDecoderConfigJson(s: DiffusionShape): object {
  const vaeScale = 2 ** (s.vaeChannels.length - 1);
  return {
    _class_name: 'AutoencoderKL',
    _diffusers_version: DIFFUSERS_VERSION,
    in_channels: 3,
    out_channels: 3,
    latent_channels: s.latentChannels,
    block_out_channels: s.vaeChannels,
    down_block_types: s.vaeChannels.map(() => 'DownEncoderBlock2D'),
    up_block_types: s.vaeChannels.map(() => 'UpDecoderBlock2D'),
    layers_per_block: 1,
    norm_num_groups: s.normGroups,
    act_fn: 'silu',
    sample_size: 512,
    scaling_factor: s.scalingFactor,
    // For readers that do not derive it: pixels per latent cell on each side.
    vae_scale_factor: vaeScale,
  };
}
