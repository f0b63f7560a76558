// Facts about decoded 16 kHz mono samples that decide what to do before any model runs.
/** Whisper's input rate; ffmpeg resamples every upload to it. */
export const SAMPLE_RATE = 16_000;

/** The duration of `samples` samples, to the millisecond. */
export function durationSeconds(samples: number): number {
  return Math.round((samples / SAMPLE_RATE) * 1000) / 1000;
}

/**
 * Whether the audio holds nothing to transcribe: no samples, or a level below −60 dBFS RMS
 * throughout. Whisper invents text ("Thank you.") for silence, so silence never reaches it.
 */
export function isSilent(samples: Float32Array, thresholdRms = 1e-3): boolean {
  let sumSquares = 0;
  for (const sample of samples) sumSquares += sample * sample;
  return samples.length === 0 || Math.sqrt(sumSquares / samples.length) < thresholdRms;
}
