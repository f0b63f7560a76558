// The diffusion worker's Prometheus metrics, labelled by model where it applies.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function createDiffusionMetrics(registry: Registry) {
  const registers = [registry];
  return {
    queueDepth: new Gauge({
      name: 'diffusion_queue_depth',
      help: 'Requests waiting for a generation slot.',
      registers,
    }),
    running: new Gauge({
      name: 'diffusion_active_generations',
      help: 'Images being denoised now (the rows of the running batches whose callers are still there).',
      registers,
    }),
    activeBatches: new Gauge({
      name: 'diffusion_active_batches',
      help: 'Batches being denoised now (at most DIFFUSION_CONCURRENCY).',
      registers,
    }),
    batchSize: new Histogram({
      name: 'diffusion_batch_size',
      help: 'Images denoised together in one UNet batch (at most DIFFUSION_MAX_BATCH), per batch.',
      labelNames: ['model'],
      buckets: [1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
      registers,
    }),
    images: new Counter({
      name: 'diffusion_images_total',
      help: 'Finished image requests by outcome (ok, cancelled, error, …).',
      labelNames: ['model', 'outcome'],
      registers,
    }),
    steps: new Counter({
      name: 'diffusion_unet_steps_total',
      help: 'UNet denoising steps run, per image: a batched step of n images counts n (rate() of it is image steps per second).',
      labelNames: ['model'],
      registers,
    }),
    stepSeconds: new Histogram({
      name: 'diffusion_step_seconds',
      help: 'Duration of one batched UNet denoising step (all images of the batch advance one step; see diffusion_batch_size).',
      labelNames: ['model'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    vaeDecodeSeconds: new Histogram({
      name: 'diffusion_vae_decode_seconds',
      help: "Duration of one image's VAE decode (latents to pixels; images are decoded one at a time).",
      labelNames: ['model'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    stepsPerSecond: new Histogram({
      name: 'diffusion_steps_per_second',
      help: 'UNet steps per second of each image’s denoising loop (of the batch it ran in, up to its decode).',
      labelNames: ['model', 'size'],
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100],
      registers,
    }),
    latency: new Histogram({
      name: 'diffusion_image_seconds',
      help: 'From the start of its batch (after queueing) to the stored PNG, by image size.',
      labelNames: ['model', 'size'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
  };
}

export type DiffusionMetrics = ReturnType<typeof createDiffusionMetrics>;

/** A low-cardinality size label: the longer side rounded up to a power of two (≤256 … 2048). */
export function sizeLabel(width: number, height: number): string {
  const side = Math.max(width, height);
  for (const bucket of [256, 512, 1024]) if (side <= bucket) return String(bucket);
  return '2048';
}
