// The text-to-image loop: seeded initial latents, classifier-free guidance with the conditional and
// unconditional passes in one UNet call, the scheduler's steps, then the VAE. Cancellation is
// checked before every UNet call, so a client that goes away stops the loop within one step.
import { SeededRandom } from '@switchboard/models';
import { createScheduler } from '../scheduling/scheduler.js';
import type { DiffusionModel, FloatTensor } from './diffusion-model.js';

export interface ImageRequest {
  readonly prompt: string;
  readonly negativePrompt: string;
  readonly width: number;
  readonly height: number;
  readonly steps: number;
  readonly seed: bigint;
  readonly guidanceScale: number;
}

export interface LoopObserver {
  /** After each UNet step, with the step's index. */
  onStep?(index: number): void;
}

/** The initial latents of an image: unit Gaussian noise from the seed, times the scheduler's sigma. */
export function initialLatents(
  model: DiffusionModel,
  request: ImageRequest,
  initNoiseSigma: number,
  random = new SeededRandom(request.seed),
): FloatTensor {
  const dims = [
    1,
    model.latentChannels,
    request.height / model.vaeScaleFactor,
    request.width / model.vaeScaleFactor,
  ];
  const noise = random.normals(dims.reduce((a, b) => a * b, 1));
  if (initNoiseSigma !== 1) for (let i = 0; i < noise.length; i++) noise[i]! *= initNoiseSigma;
  return { data: noise, dims };
}

/** Runs the pipeline; resolves with the decoded image `[1, 3, height, width]` in [−1, 1]. */
export async function denoise(
  model: DiffusionModel,
  request: ImageRequest,
  signal: AbortSignal,
  observer: LoopObserver = {},
): Promise<FloatTensor> {
  // One stream per request: the initial latents first, then any noise an ancestral scheduler adds.
  const random = new SeededRandom(request.seed);
  const scheduler = createScheduler(model.scheduler, request.steps, (count) => random.normals(count));
  let latents = initialLatents(model, request, scheduler.initNoiseSigma, random);
  // As in diffusers, guidance ≤ 1 means no unconditional pass at all.
  const guided = request.guidanceScale > 1;
  signal.throwIfAborted();
  const hidden = await model.encodePrompts(
    guided ? [request.negativePrompt, request.prompt] : [request.prompt],
  );
  const size = latents.data.length;

  for (let index = 0; index < scheduler.timesteps.length; index++) {
    signal.throwIfAborted();
    const input = scheduler.scaleModelInput(latents.data, index);
    const batch = guided ? concat(input, input) : input;
    const dims = [guided ? 2 : 1, ...latents.dims.slice(1)];
    const prediction = await model.predictNoise({ data: batch, dims }, scheduler.timesteps[index]!, hidden);
    const noise = guided ? applyGuidance(prediction, size, request.guidanceScale) : prediction;
    latents = { data: scheduler.step(noise, index, latents.data), dims: latents.dims };
    observer.onStep?.(index);
  }
  signal.throwIfAborted();
  return model.decodeLatents(latents);
}

function concat(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** uncond + scale · (cond − uncond), from a batch of [unconditional, conditional]. */
export function applyGuidance(batch: Float32Array, size: number, scale: number): Float32Array {
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const uncond = batch[i]!;
    out[i] = uncond + scale * (batch[size + i]! - uncond);
  }
  return out;
}
