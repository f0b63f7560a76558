// How a clip longer than one UNet pass is made: segments of `framesPerPass` frames, chained. The
// first segment is conditioned on the input image; each later one on the last frame written
// before it. An SVD pass reproduces its conditioning image as its own first frame, so a later
// segment's first frame would repeat the previous segment's last one: it is not decoded or
// written, and each later segment adds framesPerPass − 1 new frames. The last segment is denoised
// whole (the model always sees framesPerPass frames) but only the frames still needed are decoded.

export interface Segment {
  /** Frames of the pass before the first one written (0 for the first segment, 1 after). */
  readonly skip: number;
  /** Frames written from this segment, in order, starting at frame `skip` of the pass. */
  readonly write: number;
}

export function planSegments(totalFrames: number, framesPerPass: number): Segment[] {
  if (!Number.isInteger(totalFrames) || totalFrames < 1) throw new Error(`bad frame count ${totalFrames}`);
  if (!Number.isInteger(framesPerPass) || framesPerPass < 2)
    throw new Error(`bad frames per pass ${framesPerPass}`);
  const segments: Segment[] = [{ skip: 0, write: Math.min(framesPerPass, totalFrames) }];
  let remaining = totalFrames - segments[0]!.write;
  while (remaining > 0) {
    const write = Math.min(framesPerPass - 1, remaining);
    segments.push({ skip: 1, write });
    remaining -= write;
  }
  return segments;
}

/** Decode chunks of one segment: [start, end) frame ranges of the pass, at most `chunkSize` long. */
export function decodeChunks(segment: Segment, chunkSize: number): [number, number][] {
  const chunks: [number, number][] = [];
  const end = segment.skip + segment.write;
  for (let start = segment.skip; start < end; start += chunkSize)
    chunks.push([start, Math.min(end, start + chunkSize)]);
  return chunks;
}
