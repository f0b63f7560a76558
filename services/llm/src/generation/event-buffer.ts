// The events of one generation on their way from the decoding loop to the call that streams them.
// The loop never waits for a reader: it pushes, and the reader takes at its own pace. How much is
// waiting unread is visible, so the loop can stop a generation whose reader has fallen behind.
import type { GenerationEvent } from './generation.js';

export class EventBuffer implements AsyncIterable<GenerationEvent> {
  private readonly events: GenerationEvent[] = [];
  private failure: { error: unknown } | undefined;
  private ended = false;
  private wake: (() => void) | undefined;

  /** Text events pushed and not yet taken. */
  get unread(): number {
    return this.events.length;
  }

  push(event: GenerationEvent): void {
    this.events.push(event);
    this.notify();
  }

  /** No more events; the reader gets the ones pushed, then the end. */
  end(): void {
    this.ended = true;
    this.notify();
  }

  /** The reader gets the events pushed, then `error`. */
  fail(error: unknown): void {
    this.failure ??= { error };
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<GenerationEvent> {
    for (;;) {
      const event = this.events.shift();
      if (event !== undefined) yield event;
      else if (this.failure) throw this.failure.error;
      else if (this.ended) return;
      else await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
