// One image request's way through the worker as spans in its own trace: waiting for a batch
// (diffusion.queue), the denoising loop of the batch it joined (diffusion.denoise) and its own VAE
// decode (diffusion.vae). The batch runs in whichever request's async context started the queue's
// runner, so the request's context is captured when it is submitted and every span starts in it.
import {
  captureTraceParent,
  failSpan,
  startSpanIn,
  type Span,
  type SpanAttributes,
  type TraceParent,
} from '@switchboard/telemetry';

export class ImagePhases {
  private readonly parent: TraceParent = captureTraceParent();
  /** The phase's span; undefined once the request's way through the worker is over. */
  private span: Span | undefined;

  /** Starts waiting (diffusion.queue), in the trace of the context active now. */
  constructor(private readonly attributes: SpanAttributes) {
    this.span = startSpanIn(this.parent, 'diffusion', 'diffusion.queue', attributes);
  }

  /** Its batch started denoising, `batchSize` images together. */
  batchStarted(batchSize: number, steps: number): void {
    this.next('diffusion.denoise', { 'diffusion.batch_size': batchSize, 'diffusion.steps': steps });
  }

  /** Its latents are denoised; its VAE decode starts. */
  denoised(): void {
    this.next('diffusion.vae', {});
  }

  /** Its image is decoded: the last of its spans ends. */
  decoded(): void {
    this.span?.end();
    this.span = undefined;
  }

  failed(error: unknown): void {
    if (this.span) failSpan(this.span, error);
    this.span = undefined;
  }

  /** Its caller went away: whatever phase it was in ends here. */
  abandoned(): void {
    this.span?.setAttribute('diffusion.cancelled', true);
    this.decoded();
  }

  private next(name: string, attributes: SpanAttributes): void {
    if (!this.span) return;
    this.span.end();
    this.span = startSpanIn(this.parent, 'diffusion', name, { ...this.attributes, ...attributes });
  }
}
