// One image request's way through the worker as spans in its own trace: waiting for a batch
// (diffusion.queue), the denoising loop of the batch it joined (diffusion.denoise) and its own VAE
// decode (diffusion.vae). The batch runs in whichever request's async context started the queue's
// runner, so the request's context is captured when it is submitted and every span starts in it.
import { PhaseSpans, type SpanAttributes } from '@switchboard/telemetry';

export class ImagePhases {
  private readonly phases: PhaseSpans;

  /** Starts waiting (diffusion.queue), in the trace of the context active now. */
  constructor(attributes: SpanAttributes) {
    this.phases = new PhaseSpans('diffusion', 'diffusion.queue', attributes);
  }

  /** Its batch started denoising, `batchSize` images together. */
  batchStarted(batchSize: number, steps: number): void {
    this.phases.next('diffusion.denoise', { 'diffusion.batch_size': batchSize, 'diffusion.steps': steps });
  }

  /** Its latents are denoised; its VAE decode starts. */
  denoised(): void {
    this.phases.next('diffusion.vae');
  }

  /** Its image is decoded: the last of its spans ends. */
  decoded(): void {
    this.phases.end();
  }

  failed(error: unknown): void {
    this.phases.fail(error);
  }

  /** Its caller went away: whatever phase it was in ends here. */
  abandoned(): void {
    this.phases.end({ 'diffusion.cancelled': true });
  }
}
