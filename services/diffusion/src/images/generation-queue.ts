// The slot of image generation: a BatchingQueue whose batches are requests that can share a UNet
// pass (same model, size, step count, guided or not), denoised together by denoiseBatch. Only the
// denoising holds a slot; PNG encoding and storing happen per request once its batch is done.
import { BatchingQueue, type BatchEntry } from '@switchboard/models';
import { denoiseBatch, passKey, type ImageRequest } from '../generation/denoise.js';
import type { DiffusionModel, FloatTensor } from '../generation/diffusion-model.js';
import type { DiffusionMetrics } from '../metrics.js';
import type { ImagePhases } from './image-phases.js';

export interface GenerationJob {
  readonly modelId: string;
  readonly model: DiffusionModel;
  readonly image: ImageRequest;
  /** The request's spans, started in its caller's trace (the batch runs outside its context). */
  readonly phases: ImagePhases;
}

export interface DenoisedImage {
  /** The decoded image, `[1, 3, height, width]` in [−1, 1]. */
  readonly pixels: FloatTensor;
  /** performance.now() when its batch started, for the per-image latency. */
  readonly startedAt: number;
  /** From the start of its batch to its decoded image. */
  readonly loopSeconds: number;
  /** Images its batch started with. */
  readonly batchSize: number;
}

export type GenerationQueue = BatchingQueue<GenerationJob, DenoisedImage>;

export interface GenerationQueueOptions {
  /** Batches denoised at once. */
  readonly concurrency: number;
  /** Requests waiting for a slot. */
  readonly depth: number;
  /** Most requests in one batch. */
  readonly maxBatch: number;
}

/** Requests with equal keys can share a UNet pass. */
export const generationBatchKey = (job: GenerationJob): string => `${job.modelId}\n${passKey(job.image)}`;

export function createGenerationQueue(
  options: GenerationQueueOptions,
  metrics: DiffusionMetrics,
): GenerationQueue {
  return new BatchingQueue<GenerationJob, DenoisedImage>(
    {
      ...options,
      batchKey: generationBatchKey,
      onDepth: (waiting, running) => {
        metrics.queueDepth.set(waiting);
        metrics.activeBatches.set(running);
      },
    },
    (batch) => runBatch(batch, metrics),
  );
}

async function runBatch(
  batch: readonly BatchEntry<GenerationJob>[],
  metrics: DiffusionMetrics,
): Promise<(DenoisedImage | Error)[]> {
  const { model, modelId } = batch[0]!.request;
  const startedAt = performance.now();
  const done: (number | undefined)[] = batch.map(() => undefined);
  const labels = { model: modelId };
  metrics.batchSize.observe(labels, batch.length);
  metrics.running.inc(batch.length);
  for (const { request } of batch) request.phases.batchStarted(batch.length, request.image.steps);
  try {
    const images = await denoiseBatch(
      model,
      batch.map(({ request, signal }) => ({ request: request.image, signal })),
      {
        onStep: (_index, images, seconds) => {
          metrics.steps.inc(labels, images);
          metrics.stepSeconds.observe(labels, seconds);
        },
        onDecodeStart: (row) => batch[row]!.request.phases.denoised(),
        onDecoded: (row, seconds) => {
          metrics.vaeDecodeSeconds.observe(labels, seconds);
          batch[row]!.request.phases.decoded();
        },
        onRowEnd: (row) => {
          done[row] = performance.now();
          metrics.running.dec();
        },
      },
    );
    return images.map((pixels, row) =>
      pixels instanceof Error
        ? pixels
        : {
            pixels,
            startedAt,
            loopSeconds: (done[row]! - startedAt) / 1000,
            batchSize: batch.length,
          },
    );
  } finally {
    // Rows a failing model left unfinished.
    const unfinished = done.filter((at) => at === undefined).length;
    if (unfinished > 0) metrics.running.dec(unfinished);
  }
}
