// One segment's denoising loop, as diffusers' StableVideoDiffusionPipeline runs it: seeded latents
// for every frame of the pass times init_noise_sigma; per step the scaled latents ++ the image's
// latents go through the UNet with the unconditional row (zero image embedding, zero image
// latents) and the conditional row in one batch; classifier-free guidance whose scale rises
// linearly across the frames; then the scheduler's step. Cancellation is checked before every UNet
// call, so a canceled job stops within one step.
import type { SeededRandom } from '@switchboard/models';
import type { VideoScheduler } from './scheduler.js';
import type { VideoModel } from './video-model.js';

/** Guidance scale at the first and the last frame of a pass (diffusers' defaults: 1.0 and 3.0). */
export interface GuidanceRange {
  readonly min: number;
  readonly max: number;
}

export interface SegmentConditioning {
  /** CLIP image_embeds of the input image, [embedDim]. */
  readonly imageEmbeds: Float32Array;
  /** The conditioning frame's VAE latents (mode, unscaled), [latentChannels, h, w]. */
  readonly imageLatents: Float32Array;
  /** fps − 1, motion_bucket_id, noise_aug_strength. */
  readonly addedTimeIds: readonly [number, number, number];
  readonly latentHeight: number;
  readonly latentWidth: number;
}

export interface DenoiseOptions {
  readonly guidance: GuidanceRange;
  readonly signal: AbortSignal;
  /** After each step. */
  onStep(): void;
}

/** torch.linspace(min, max, frames): the guidance scale of each frame. */
export function frameGuidanceScales(guidance: GuidanceRange, frames: number): Float64Array {
  return Float64Array.from({ length: frames }, (_, f) =>
    frames === 1 ? guidance.min : guidance.min + ((guidance.max - guidance.min) * f) / (frames - 1),
  );
}

/** Denoises one pass; resolves with its latents [framesPerPass, latentChannels, h, w]. */
export async function denoiseSegment(
  model: VideoModel,
  scheduler: VideoScheduler,
  conditioning: SegmentConditioning,
  random: SeededRandom,
  options: DenoiseOptions,
): Promise<Float32Array> {
  const frames = model.framesPerPass;
  const lc = model.latentChannels;
  const { latentHeight: h, latentWidth: w, imageEmbeds, imageLatents } = conditioning;
  const frameSize = lc * h * w;
  const latents = random.normals(frames * frameSize);
  for (let i = 0; i < latents.length; i++) latents[i]! *= scheduler.initNoiseSigma;

  // As in diffusers, guidance only when some frame's scale exceeds 1; the unconditional row first.
  const guided = options.guidance.max > 1;
  const rows = guided ? 2 : 1;
  const scales = frameGuidanceScales(options.guidance, frames);
  // The UNet's sample [rows, frames, 2 · lc, h, w]: the image-latent half never changes, so it is
  // written once (zeros in the unconditional row) and each step only rewrites the noisy half.
  const sample = new Float32Array(rows * frames * 2 * frameSize);
  for (let f = 0; f < frames; f++)
    sample.set(imageLatents, ((rows - 1) * frames + f) * 2 * frameSize + frameSize);
  const embeds = new Float32Array(rows * imageEmbeds.length);
  embeds.set(imageEmbeds, (rows - 1) * imageEmbeds.length);
  const addedTimeIds = new Float32Array(rows * 3);
  for (let r = 0; r < rows; r++) addedTimeIds.set(conditioning.addedTimeIds, r * 3);
  const guidedOutput = guided ? new Float32Array(latents.length) : undefined;

  for (let step = 0; step < scheduler.timesteps.length; step++) {
    options.signal.throwIfAborted();
    const scale = scheduler.inputScale(step);
    for (let r = 0; r < rows; r++) {
      for (let f = 0; f < frames; f++) {
        const target = (r * frames + f) * 2 * frameSize;
        for (let k = 0; k < frameSize; k++) sample[target + k] = latents[f * frameSize + k]! * scale;
      }
    }
    const prediction = await model.predict({
      sample,
      dims: [rows, frames, 2 * lc, h, w],
      timestep: scheduler.timesteps[step]!,
      imageEmbeds: embeds,
      addedTimeIds,
    });
    let output = prediction;
    if (guidedOutput !== undefined) {
      const conditional = frames * frameSize;
      for (let f = 0; f < frames; f++) {
        const s = scales[f]!;
        for (let k = f * frameSize; k < (f + 1) * frameSize; k++) {
          const uncond = prediction[k]!;
          guidedOutput[k] = uncond + s * (prediction[conditional + k]! - uncond);
        }
      }
      output = guidedOutput;
    }
    scheduler.step(output, step, latents);
    options.onStep();
  }
  return latents;
}
