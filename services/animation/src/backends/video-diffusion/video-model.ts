// What the render loop needs from an image-to-video pipeline, and nothing about how it runs: the
// adapter (onnx-pipeline.ts) implements it over ONNX Runtime sessions. Tensors are float32,
// row-major, one clip at a time.
import type { VideoSchedulerConfig } from './scheduler-config.js';

/** How the CLIP image encoder wants its picture: a square of `size`, normalised per channel. */
export interface ClipPreprocessing {
  readonly size: number;
  readonly mean: readonly [number, number, number];
  readonly std: readonly [number, number, number];
}

export interface UnetInput {
  /** [rows, frames, 2 · latentChannels, h, w]: scaled noisy latents ++ the image's latents. */
  readonly sample: Float32Array;
  readonly dims: readonly [number, number, number, number, number];
  readonly timestep: number;
  /** [rows, embedDim]: one image embedding per row (zeros for the unconditional row). */
  readonly imageEmbeds: Float32Array;
  /** [rows, 3]: fps − 1, motion_bucket_id, noise_aug_strength per row. */
  readonly addedTimeIds: Float32Array;
}

export interface VideoModel {
  readonly id: string;
  /** Channels of the latent space (4 for SVD). */
  readonly latentChannels: number;
  /** Pixels per latent cell on each side (8 for SVD's VAE). */
  readonly vaeScaleFactor: number;
  /** Frames one UNet pass denoises together (unet/config.json `num_frames`). */
  readonly framesPerPass: number;
  readonly nativeWidth: number;
  readonly nativeHeight: number;
  /** The UNet's weights as exported (its `sample` input's float type), for /models. */
  readonly dtype: 'fp32' | 'fp16';
  readonly clip: ClipPreprocessing;
  readonly scheduler: VideoSchedulerConfig;
  /** CLIP `image_embeds` of one normalised image [3, size, size]. */
  embedImage(pixelValues: Float32Array): Promise<Float32Array>;
  /** The VAE latent distribution's mode, unscaled, of one image [3, height, width] in [−1, 1]. */
  encodeImage(pixels: Float32Array, width: number, height: number): Promise<Float32Array>;
  /** The UNet's prediction, [rows, frames, latentChannels, h, w]. */
  predict(input: UnetInput): Promise<Float32Array>;
  /**
   * Consecutive frames' latents [frames, latentChannels, h, w] as the sampler leaves them (the
   * scaling factor is divided out here) → RGB [frames, 3, h · f, w · f] around [−1, 1].
   */
  decodeFrames(latents: Float32Array, frames: number, h: number, w: number): Promise<Float32Array>;
  dispose(): Promise<void>;
}
