// What transcription needs from a speech model, and nothing about how it runs: the adapter
// (adapters/whisper-pipeline.ts) implements it over Transformers.js + ONNX Runtime.
import type { RawChunk } from './segments.js';

export interface RecognitionRequest {
  /** 16 kHz mono samples. */
  readonly audio: Float32Array;
  /** ISO 639-1 code the model knows. */
  readonly language: string;
  /** Aborts between decoding steps. */
  readonly signal: AbortSignal;
}

export interface Recognition {
  readonly text: string;
  readonly chunks: readonly RawChunk[];
}

export interface SpeechModel {
  readonly id: string;
  /** ISO 639-1 codes the model can transcribe (its language tokens). */
  readonly languages: ReadonlySet<string>;
  /** The most probable language of the audio's first window, the way Whisper detects it. */
  detectLanguage(audio: Float32Array): Promise<string>;
  /** Timestamped text; audio longer than one window is windowed and stitched. */
  recognize(request: RecognitionRequest): Promise<Recognition>;
  dispose(): Promise<void>;
}
