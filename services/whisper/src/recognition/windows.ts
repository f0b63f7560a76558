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

/** Window, overlap and step in samples; consecutive windows start `jump` apart. */
function geometry(windowing: Windowing, sampleRate: number): { size: number; stride: number; jump: number } {
  const size = Math.round(windowing.chunkSeconds * sampleRate);
  const stride = Math.round(windowing.strideSeconds * sampleRate);
  const jump = size - 2 * stride;
  if (jump <= 0) throw new Error('the stride must be less than half the window');
  return { size, stride, jump };
}

export function planWindows(samples: number, windowing: Windowing, sampleRate: number): AudioWindow[] {
  const { size, stride, jump } = geometry(windowing, sampleRate);
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

/** One window of samples, as `planWindows` would cut it. */
export interface WindowSamples extends AudioWindow {
  /** The window's samples: a view of the windower's buffer, valid until the next window is asked for. */
  readonly samples: Float32Array;
}

/**
 * Cuts samples into the windows `planWindows` would plan for the whole audio, as the samples
 * arrive: one window-sized buffer whatever the audio's length, and nothing read ahead of the
 * consumer (a window is known to be the last only when the input ends, so one sample past a full
 * window is read before it is handed out). Consecutive windows share `2 × stride` samples, which
 * stay in the buffer.
 */
export async function* streamWindows(
  chunks: AsyncIterable<Float32Array>,
  windowing: Windowing,
  sampleRate: number,
): AsyncGenerator<WindowSamples, void, undefined> {
  const { size, stride, jump } = geometry(windowing, sampleRate);
  const buffer = new Float32Array(size);
  let start = 0;
  let filled = 0;
  for await (let chunk of chunks) {
    while (chunk.length > 0) {
      if (filled === size) {
        // More samples follow a full window, so it is not the last: hand it out, keep its overlap.
        yield {
          start,
          end: start + size,
          strideLeft: start === 0 ? 0 : stride,
          strideRight: stride,
          samples: buffer,
        };
        buffer.copyWithin(0, jump, size);
        filled = size - jump;
        start += jump;
      }
      const take = Math.min(size - filled, chunk.length);
      buffer.set(chunk.subarray(0, take), filled);
      filled += take;
      chunk = chunk.subarray(take);
    }
  }
  if (filled > 0) {
    yield {
      start,
      end: start + filled,
      strideLeft: start === 0 ? 0 : stride,
      strideRight: 0,
      samples: buffer.subarray(0, filled),
    };
  }
}
