// How long audio is cut for a model that hears a fixed window (Whisper: 30 s): windows overlap by
// `strideSeconds` on each inner side, and each says how much of its edges belongs to a neighbour,
// which is what the tokenizer's ASR decoding needs to stitch the texts without repeats.

export interface Windowing {
  readonly chunkSeconds: number;
  readonly strideSeconds: number;
}

export interface AudioWindow {
  /** Sample offsets, end exclusive. */
  readonly start: number;
  readonly end: number;
  /** Samples at each edge shared with the previous / next window (0 at the audio's ends). */
  readonly strideLeft: number;
  readonly strideRight: number;
}

export function planWindows(samples: number, windowing: Windowing, sampleRate: number): AudioWindow[] {
  const size = Math.round(windowing.chunkSeconds * sampleRate);
  const stride = Math.round(windowing.strideSeconds * sampleRate);
  const jump = size - 2 * stride;
  if (jump <= 0) throw new Error('the stride must be less than half the window');
  const windows: AudioWindow[] = [];
  for (let start = 0; ; start += jump) {
    const last = start + size >= samples;
    windows.push({
      start,
      end: Math.min(start + size, samples),
      strideLeft: start === 0 ? 0 : stride,
      strideRight: last ? 0 : stride,
    });
    if (last) return windows;
  }
}
