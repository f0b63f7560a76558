// What transcription needs from a speech model, and nothing about how it runs: the adapter
// (adapters/whisper-model.ts) implements it over Transformers.js + ONNX Runtime. The model sees the
// windows it is given (a batch of them at most), so the caller decides how much audio is in memory
// (a few windows, not the file).
import type { RawChunk } from './segments.js';
import type { AudioWindow } from './windows.js';

export interface WindowRequest {
  /** The window's 16 kHz mono samples (at most one window long). */
  readonly samples: Float32Array;
  /** ISO 639-1 code the model knows. */
  readonly language: string;
  /** Ends this window's decoding at the next step (the other windows of its batch go on). */
  readonly signal: AbortSignal;
}

/** What one window contributed: the model's tokens (none for a window that was not recognised). */
export interface WindowText {
  readonly window: AudioWindow;
  readonly tokens: readonly number[];
}

export interface Recognition {
  readonly text: string;
  readonly chunks: readonly RawChunk[];
}

export interface SpeechModel {
  readonly id: string;
  /** The element type of the weights as loaded ("fp32"), for /models. */
  readonly dtype: string;
  /** False for an English-only model (no language tokens; it transcribes English). */
  readonly multilingual: boolean;
  /** ISO 639-1 codes the model can transcribe: its language tokens, or `en` alone if English-only. */
  readonly languages: ReadonlySet<string>;
  /**
   * The most probable of the model's own languages for one window of audio, the way Whisper
   * detects it; `en` without running the model when it is English-only.
   */
  detectLanguage(samples: Float32Array): Promise<string>;
  /**
   * Requests with equal keys can be recognised in one `recognizeWindows` call (one model pass):
   * the model's id and the length of the decoder prompt `language` needs.
   */
  batchKey(language: string): string;
  /**
   * The tokens of each window, timestamps included, decoded together in one pass; each window's
   * tokens are exactly those it gives alone. One entry per request, in order: its tokens, or its
   * signal's reason when it aborted. The requests' keys (`batchKey`) must be equal.
   */
  recognizeWindows(requests: readonly WindowRequest[]): Promise<(number[] | Error)[]>;
  /** Timestamped text of consecutive windows, their overlaps stitched. */
  stitch(windows: readonly WindowText[]): Recognition;
  dispose(): Promise<void>;
}
