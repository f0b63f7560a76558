// What the denoising loop needs from a text-to-image pipeline, and nothing about how it runs: the
// adapter (adapters/onnx-pipeline.ts) implements it over ONNX Runtime sessions.
import type { SchedulerConfig } from '../scheduling/noise-schedule.js';

/** A float tensor in row-major order. */
export interface FloatTensor {
  readonly data: Float32Array;
  readonly dims: readonly number[];
}

export interface DiffusionModel {
  readonly id: string;
  /** Channels of the latent space (4 for Stable Diffusion). */
  readonly latentChannels: number;
  /** Pixels per latent cell on each side (8 for Stable Diffusion's VAE). */
  readonly vaeScaleFactor: number;
  /** Width × height the pipeline was trained at (512×512 for SD 1.5); the pixel budget scales it. */
  readonly nativePixels: number;
  /** The same native size per side, for /models. */
  readonly nativeWidth: number;
  readonly nativeHeight: number;
  /** Element type of the weights as loaded ("fp32", "fp16"), for /models. */
  readonly dtype: string;
  readonly scheduler: SchedulerConfig;
  /** Text encoder hidden states for each prompt, batched in the order given. */
  encodePrompts(prompts: readonly string[]): Promise<FloatTensor>;
  /** The UNet's prediction for a batch of latents at one timestep. */
  predictNoise(latents: FloatTensor, timestep: number, hiddenStates: FloatTensor): Promise<Float32Array>;
  /** Latents → RGB in [−1, 1], `[1, 3, height, width]`; the VAE's scaling factor is applied here. */
  decodeLatents(latents: FloatTensor): Promise<FloatTensor>;
  dispose(): Promise<void>;
}
