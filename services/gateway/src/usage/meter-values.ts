import type { MeterValues } from '@switchboard/usage';

/** The llm worker's default when a call sets no max_tokens (llm.proto): what such a call reserves. */
export const DEFAULT_MAX_TOKENS = 2048;

/** One completion's usage, from the worker's count of tokens. */
export function completionValues(
  usage: { prompt_tokens: number; completion_tokens: number } | null | undefined,
): MeterValues {
  return {
    requests: 1,
    input_tokens: usage?.prompt_tokens ?? 0,
    output_tokens: usage?.completion_tokens ?? 0,
  };
}

export interface ImageSize {
  width: number;
  height: number;
  steps: number;
}

/** Images and megapixel-steps (width × height × steps / 10⁶), summed over the images. */
export function imageValues(images: readonly ImageSize[]): MeterValues {
  const megapixelSteps = images.reduce(
    (sum, { width, height, steps }) => sum + (width * height * steps) / 1e6,
    0,
  );
  return { images: images.length, megapixel_steps: megapixelSteps };
}

/** One transcription: the decoded audio's duration, as the worker measured it. */
export function transcriptionValues(durationSeconds: number): MeterValues {
  return { requests: 1, audio_seconds: Math.max(0, durationSeconds) };
}

/** A browser session's life, creation to close or expiry, in seconds. */
export function sessionSeconds(createdAt: string, endedAtMs: number): number {
  const created = Date.parse(createdAt);
  return Number.isFinite(created) ? Math.max(0, (endedAtMs - created) / 1000) : 0;
}
