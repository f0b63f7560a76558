// The text-to-image loop: seeded initial latents, classifier-free guidance with the conditional and
// unconditional passes in one UNet call, the scheduler's steps, then the VAE. Several requests that
// share a pass (passKey) run as one batch: one text-encoder call and one UNet call per step for all
// of them. Each image still comes out bit for bit as it would alone, because everything that could
// tie rows together stays per row: its own random stream and scheduler, its own guidance scale, its
// own VAE decode (ONNX Runtime's CPU kernels compute each batch item the same whatever sits beside
// it; the batching tests check exactly that). Cancellation is checked per row before every UNet
// call: an aborted row leaves the batch within one step, the others go on.
import { SeededRandom } from '@switchboard/models';
import { createScheduler, type Scheduler } from '../scheduling/scheduler.js';
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

/** One image of a batch, with its caller's signal. */
export interface BatchRow {
  readonly request: ImageRequest;
  readonly signal: AbortSignal;
}

export interface LoopObserver {
  /** After each UNet step, with the step's index, how many images it advanced and its seconds. */
  onStep?(index: number, images: number, seconds: number): void;
  /** A row's latents are denoised and its VAE decode starts. */
  onDecodeStart?(row: number): void;
  /** A row's VAE decode took `seconds`. */
  onDecoded?(row: number, seconds: number): void;
  /** Once per row, when it leaves (aborted) or its image is decoded. */
  onRowEnd?(row: number): void;
}

/** As in diffusers, guidance ≤ 1 means no unconditional pass at all. */
export const isGuided = (request: ImageRequest): boolean => request.guidanceScale > 1;

/**
 * What requests must share to run in one UNet pass: the latent shape, the timesteps and whether an
 * unconditional half is there. Prompts, seeds and guidance scales may differ.
 */
export function passKey(request: ImageRequest): string {
  return `${request.width}x${request.height}/${request.steps} steps/${isGuided(request) ? 'guided' : 'unguided'}`;
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

/** Runs the pipeline for one request; resolves with the decoded image `[1, 3, height, width]` in [−1, 1]. */
export async function denoise(
  model: DiffusionModel,
  request: ImageRequest,
  signal: AbortSignal,
  observer: LoopObserver = {},
): Promise<FloatTensor> {
  const [image] = await denoiseBatch(model, [{ request, signal }], observer);
  if (image instanceof Error) throw image;
  return image!;
}

/** A row's own state: nothing here is shared with its neighbours. */
interface RowState {
  readonly row: number;
  readonly request: ImageRequest;
  readonly signal: AbortSignal;
  readonly scheduler: Scheduler;
  latents: Float32Array;
  /** This row's text encoder output: [negative, prompt] with guidance, [prompt] without. */
  context: Float32Array;
}

/**
 * Runs the pipeline for rows that share a pass (equal passKey); answers one image, or the abort
 * reason of a row whose signal aborted, per row in order. Rejects only when the model fails.
 */
export async function denoiseBatch(
  model: DiffusionModel,
  rows: readonly BatchRow[],
  observer: LoopObserver = {},
): Promise<(FloatTensor | Error)[]> {
  const key = passKey(rows[0]!.request);
  if (rows.some((r) => passKey(r.request) !== key)) throw new Error('a batch must share one pass');
  const guided = isGuided(rows[0]!.request);
  const results: (FloatTensor | Error)[] = [];
  let live = rows.map((row, index) => startRow(model, row, index));
  const latentDims = [
    model.latentChannels,
    rows[0]!.request.height / model.vaeScaleFactor,
    rows[0]!.request.width / model.vaeScaleFactor,
  ];
  // Rows whose caller has gone leave here, answered with the abort reason.
  const leave = () => {
    live = live.filter((state) => {
      if (!state.signal.aborted) return true;
      results[state.row] = abortReason(state.signal);
      observer.onRowEnd?.(state.row);
      return false;
    });
    return live.length > 0;
  };

  if (!leave()) return results;
  const hidden = await model.encodePrompts(
    live.flatMap(({ request }) => (guided ? [request.negativePrompt, request.prompt] : [request.prompt])),
  );
  const perRow = hidden.data.length / live.length;
  live.forEach((state, i) => (state.context = hidden.data.subarray(i * perRow, (i + 1) * perRow)));
  const passes = guided ? 2 : 1;
  const hiddenDims = hidden.dims.slice(1);
  const timesteps = live[0]!.scheduler.timesteps;

  let context = hidden.data;
  for (let index = 0; index < timesteps.length; index++) {
    const before = live.length;
    if (!leave()) return results;
    if (live.length !== before) context = concat(live.map((state) => state.context));
    const inputs = live.map((state) => state.scheduler.scaleModelInput(state.latents, index));
    const sample = concat(inputs.flatMap((input) => (guided ? [input, input] : [input])));
    const stepStarted = performance.now();
    const prediction = await model.predictNoise(
      { data: sample, dims: [live.length * passes, ...latentDims] },
      timesteps[index]!,
      { data: context, dims: [live.length * passes, ...hiddenDims] },
    );
    const size = sample.length / (live.length * passes);
    live.forEach((state, i) => {
      const own = prediction.subarray(i * passes * size, (i + 1) * passes * size);
      const noise = guided ? applyGuidance(own, size, state.request.guidanceScale) : own.slice();
      state.latents = state.scheduler.step(noise, index, state.latents);
    });
    observer.onStep?.(index, live.length, (performance.now() - stepStarted) / 1000);
  }
  // The VAE decodes one image at a time: the largest activations of the pipeline are its own, so
  // a batch would multiply the peak memory for no gain in what the images are.
  for (const state of live) {
    if (state.signal.aborted) {
      results[state.row] = abortReason(state.signal);
    } else {
      observer.onDecodeStart?.(state.row);
      const decodeStarted = performance.now();
      results[state.row] = await model.decodeLatents({ data: state.latents, dims: [1, ...latentDims] });
      observer.onDecoded?.(state.row, (performance.now() - decodeStarted) / 1000);
    }
    observer.onRowEnd?.(state.row);
  }
  return results;
}

/** A row as it would start alone: its seed's stream gives its latents, then its scheduler's noise. */
function startRow(model: DiffusionModel, { request, signal }: BatchRow, row: number): RowState {
  const random = new SeededRandom(request.seed);
  const scheduler = createScheduler(model.scheduler, request.steps, (count) => random.normals(count));
  const { data } = initialLatents(model, request, scheduler.initNoiseSigma, random);
  return { row, request, signal, scheduler, latents: data, context: new Float32Array(0) };
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new DOMException(String(reason), 'AbortError');
}

function concat(parts: readonly Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
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
