// Turns the recogniser's timestamped chunks into the segments the API promises: in order,
// non-overlapping, inside the audio. A model may emit a missing end (the window ran out), a start
// before the previous end (window overlap) or times past the end (padding); none of that reaches
// a subtitle file.

export interface RawChunk {
  readonly text: string;
  /** [start, end] in seconds; either may be null when the model gave no timestamp. */
  readonly timestamp: readonly [number | null, number | null];
}

export interface Segment {
  start: number;
  end: number;
  text: string;
}

const round3 = (seconds: number) => Math.round(seconds * 1000) / 1000;

export function toSegments(chunks: readonly RawChunk[], durationS: number): Segment[] {
  const segments: Segment[] = [];
  let previousEnd = 0;
  for (const chunk of chunks) {
    const text = chunk.text.trim();
    if (!text) continue;
    const [rawStart, rawEnd] = chunk.timestamp;
    const start = clamp(rawStart ?? previousEnd, previousEnd, durationS);
    const end = clamp(rawEnd ?? durationS, start, durationS);
    segments.push({ start: round3(start), end: round3(end), text });
    previousEnd = end;
  }
  return segments;
}

function clamp(value: number, low: number, high: number): number {
  if (!Number.isFinite(value)) return low;
  return Math.min(Math.max(value, low), Math.max(low, high));
}
