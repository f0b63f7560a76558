// One request's way through the decoding loop as spans in its own trace: waiting for a place in
// the batch (llm.queue), its prompt being read (llm.prefill), its tokens being decoded (llm.decode,
// one span for the whole decoding, never one per token). The loop serves many requests from
// whichever request's async context started it, so the request's context is captured when it is
// submitted and every span is started in it.
import {
  captureTraceParent,
  failSpan,
  startSpanIn,
  type Span,
  type SpanAttributes,
  type TraceParent,
} from '@switchboard/telemetry';
import type { FinishReason } from './generation.js';

export class GenerationPhases {
  private readonly parent: TraceParent = captureTraceParent();
  /** The phase's span; undefined once the request's way through the loop is over. */
  private span: Span | undefined;
  private phaseStarted = performance.now();

  /** Starts waiting (llm.queue), in the trace of the context active now. */
  constructor(private readonly attributes: SpanAttributes) {
    this.span = startSpanIn(this.parent, 'llm', 'llm.queue', attributes);
  }

  /** It took a place in the batch; its prompt is read next. Returns the seconds it waited. */
  admitted(): number {
    return this.next('llm.prefill');
  }

  /** Its prompt is read and it joins the decoding rows. Returns the seconds reading took. */
  prefilled(): number {
    return this.next('llm.decode');
  }

  finished(finishReason: FinishReason, completionTokens: number): void {
    this.span?.setAttributes({
      'llm.finish_reason': finishReason,
      'llm.completion_tokens': completionTokens,
    });
    this.end();
  }

  failed(error: unknown, completionTokens: number): void {
    if (!this.span) return;
    this.span.setAttribute('llm.completion_tokens', completionTokens);
    failSpan(this.span, error);
    this.span = undefined;
  }

  /** Its reader went away (cancelled, disconnected): whatever phase it was in ends here. */
  abandoned(completionTokens: number): void {
    this.span?.setAttributes({ 'llm.cancelled': true, 'llm.completion_tokens': completionTokens });
    this.end();
  }

  private next(name: string): number {
    const now = performance.now();
    const seconds = (now - this.phaseStarted) / 1000;
    this.phaseStarted = now;
    if (this.span) {
      this.span.end();
      this.span = startSpanIn(this.parent, 'llm', name, this.attributes);
    }
    return seconds;
  }

  private end(): void {
    this.span?.end();
    this.span = undefined;
  }
}
