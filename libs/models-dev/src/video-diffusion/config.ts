// The shape of the tiny image-to-video pipeline (Stable Video Diffusion family) and the JSON files
// that describe it: model_index.json naming the parts, a config.json per ONNX part, and the CLIP
// image processor's preprocessor_config.json. The animation worker reads model_index.json (which
// parts exist), unet/config.json (`num_frames` per pass, `sample_size`), vae_decoder/config.json
// (scaling factor, ×8 from block_out_channels' length) and the preprocessor's mean/std/crop size.
import { DEV_MODEL_MARKER } from '../marker.js';
import { DIFFUSERS_VERSION } from '../diffusion/config.js';

export interface VideoDiffusionShape {
  readonly latentChannels: number;
  /** Frames one UNet pass denoises together (SVD: 14, SVD-XT: 25). */
  readonly framesPerPass: number;
  /** The UNet's native latent side: sampleSize × 8 pixels. */
  readonly sampleSize: number;
  /** CLIP's projection width, which is also the UNet's cross-attention width (1024 in SVD). */
  readonly imageEmbedDim: number;
  readonly imageSize: number;
  readonly patchSize: number;
  readonly visionHidden: number;
  readonly visionHeads: number;
  readonly visionIntermediate: number;
  readonly visionLayers: number;
  /** UNet channels at the latent resolution and at ÷2 (cross-attention and temporal mixing). */
  readonly unetChannels: readonly [number, number];
  readonly unetHeads: number;
  /** Time embedding MLP width; the timestep's sinusoid has unetChannels[0] features, as in diffusers. */
  readonly timeEmbedDim: number;
  /** Sinusoid features per added time id (fps − 1, motion bucket, noise augmentation). */
  readonly additionTimeEmbedDim: number;
  /** The VAE's block_out_channels in diffusers' (encoder) order; the decoder walks them reversed. */
  readonly vaeChannels: readonly number[];
  readonly normGroups: number;
  readonly layerNormEps: number;
  readonly scalingFactor: number;
}

/** The added time ids SVD's UNet is conditioned on, in order. */
export const ADDED_TIME_IDS = ['fps_minus_one', 'motion_bucket_id', 'noise_aug_strength'] as const;

/** CLIP's image normalisation (OpenAI CLIP and SVD's feature_extractor use the same numbers). */
export const CLIP_IMAGE_MEAN = [0.48145466, 0.4578275, 0.40821073] as const;
export const CLIP_IMAGE_STD = [0.26862954, 0.26130258, 0.27577711] as const;

const marker = (seed: number): object => ({
  [DEV_MODEL_MARKER]: {
    description:
      'Tiny random-weight development model built by @switchboard/models-dev; its videos are noise.',
    seed,
  },
});

const vaeScaleFactor = (s: VideoDiffusionShape): number => 2 ** (s.vaeChannels.length - 1);

/**
 * model_index.json of a StableVideoDiffusionPipeline split into ONNX parts the way diffusers'
 * ONNX layout splits a VAE: `vae_encoder` and `vae_decoder` instead of one `vae`.
 */
export function modelIndexJson(seed: number): object {
  const onnx = ['diffusers', 'OnnxRuntimeModel'];
  return {
    _class_name: 'StableVideoDiffusionPipeline',
    _diffusers_version: DIFFUSERS_VERSION,
    feature_extractor: ['transformers', 'CLIPImageProcessor'],
    image_encoder: onnx,
    scheduler: ['diffusers', 'EulerDiscreteScheduler'],
    unet: onnx,
    vae_decoder: onnx,
    vae_encoder: onnx,
    ...marker(seed),
  };
}

/** feature_extractor/preprocessor_config.json: SVD's CLIPImageProcessor settings. */
export function preprocessorConfigJson(s: VideoDiffusionShape): object {
  return {
    crop_size: { height: s.imageSize, width: s.imageSize },
    do_center_crop: true,
    do_convert_rgb: true,
    do_normalize: true,
    do_rescale: true,
    do_resize: true,
    feature_extractor_type: 'CLIPFeatureExtractor',
    image_mean: CLIP_IMAGE_MEAN,
    image_processor_type: 'CLIPImageProcessor',
    image_std: CLIP_IMAGE_STD,
    resample: 3,
    rescale_factor: 1 / 255,
    size: { shortest_edge: s.imageSize },
  };
}

/** image_encoder/config.json: a CLIPVisionModelWithProjection (image_embeds = projected class token). */
export function imageEncoderConfigJson(s: VideoDiffusionShape): object {
  return {
    architectures: ['CLIPVisionModelWithProjection'],
    model_type: 'clip_vision_model',
    hidden_size: s.visionHidden,
    intermediate_size: s.visionIntermediate,
    num_hidden_layers: s.visionLayers,
    num_attention_heads: s.visionHeads,
    num_channels: 3,
    image_size: s.imageSize,
    patch_size: s.patchSize,
    projection_dim: s.imageEmbedDim,
    hidden_act: 'gelu',
    layer_norm_eps: s.layerNormEps,
    attention_dropout: 0,
    initializer_factor: 1,
    initializer_range: 0.02,
    torch_dtype: 'float32',
  };
}

/** unet/config.json: a UNetSpatioTemporalConditionModel config; `num_frames` is the frames per pass. */
export function unetConfigJson(s: VideoDiffusionShape): object {
  return {
    _class_name: 'UNetSpatioTemporalConditionModel',
    _diffusers_version: DIFFUSERS_VERSION,
    sample_size: s.sampleSize,
    in_channels: 2 * s.latentChannels,
    out_channels: s.latentChannels,
    down_block_types: ['DownBlockSpatioTemporal', 'CrossAttnDownBlockSpatioTemporal'],
    up_block_types: ['CrossAttnUpBlockSpatioTemporal', 'UpBlockSpatioTemporal'],
    block_out_channels: s.unetChannels,
    addition_time_embed_dim: s.additionTimeEmbedDim,
    projection_class_embeddings_input_dim: s.additionTimeEmbedDim * ADDED_TIME_IDS.length,
    layers_per_block: 1,
    cross_attention_dim: s.imageEmbedDim,
    transformer_layers_per_block: 1,
    num_attention_heads: s.unetHeads,
    num_frames: s.framesPerPass,
  };
}

/**
 * vae_encoder/config.json and vae_decoder/config.json: the AutoencoderKLTemporalDecoder config,
 * written beside each half (as diffusers' ONNX layout does for AutoencoderKL).
 */
export function vaeConfigJson(s: VideoDiffusionShape): object {
  return {
    _class_name: 'AutoencoderKLTemporalDecoder',
    _diffusers_version: DIFFUSERS_VERSION,
    in_channels: 3,
    out_channels: 3,
    latent_channels: s.latentChannels,
    block_out_channels: s.vaeChannels,
    down_block_types: s.vaeChannels.map(() => 'DownEncoderBlock2D'),
    layers_per_block: 1,
    sample_size: s.sampleSize * vaeScaleFactor(s),
    scaling_factor: s.scalingFactor,
    force_upcast: true,
    // For readers that do not derive it: pixels per latent cell on each side.
    vae_scale_factor: vaeScaleFactor(s),
  };
}
