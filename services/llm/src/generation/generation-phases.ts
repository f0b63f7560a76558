// One request's way through the decoding loop as spans in its own trace: waiting for a place in
// the batch (llm.queue), its prompt being read (llm.prefill), its tokens being decoded (llm.decode,
// one span for the whole decoding, never one per token). The loop serves many requests from
// whichever request's async context started it, so the request's context is captured when it is
// submitted and every span is started in it.
import { PhaseSpans, type SpanAttributes } from '@switchboard/telemetry';
import type { FinishReason } from './generation.js';

export class GenerationPhases {
  private readonly phases: PhaseSpans;

  /** Starts waiting (llm.queue), in the trace of the context active now. */
  constructor(attributes: SpanAttributes) {
    this.phases = new PhaseSpans('llm', 'llm.queue', attributes);
  }

  /** It took a place in the batch; its prompt is read next. Returns the seconds it waited. */
  admitted(): number {
    return this.phases.next('llm.prefill');
  }

  /** Its prompt is read and it joins the decoding rows. Returns the seconds reading took. */
  prefilled(): number {
    return this.phases.next('llm.decode');
  }

  finished(finishReason: FinishReason, completionTokens: number): void {
    this.phases.end({ 'llm.finish_reason': finishReason, 'llm.completion_tokens': completionTokens });
  }

  failed(error: unknown, completionTokens: number): void {
    this.phases.fail(error, { 'llm.completion_tokens': completionTokens });
  }

  /** Its reader went away (cancelled, disconnected): whatever phase it was in ends here. */
  abandoned(completionTokens: number): void {
    this.phases.end({ 'llm.cancelled': true, 'llm.completion_tokens': completionTokens });
  }
}
