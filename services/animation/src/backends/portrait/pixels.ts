// Pictures between ffmpeg and the models: RGB24 bytes (row-major, interleaved) in, planar float
// [1, 3, height, width] in [0, 1] to the extractors (LivePortrait's prepare_source: /255); the
// warping model's planar [0, 1] image back out as RGB24, clipped to [0, 1] and rounded
// (LivePortrait's parse_output clips the same way).

export function rgbToPlanar(rgb: Uint8Array, width: number, height: number): Float32Array {
  const pixels = width * height;
  if (rgb.length !== pixels * 3) throw new Error(`expected ${pixels * 3} bytes, got ${rgb.length}`);
  const planar = new Float32Array(pixels * 3);
  for (let p = 0; p < pixels; p++) {
    planar[p] = (rgb[3 * p] ?? 0) / 255;
    planar[pixels + p] = (rgb[3 * p + 1] ?? 0) / 255;
    planar[2 * pixels + p] = (rgb[3 * p + 2] ?? 0) / 255;
  }
  return planar;
}

const toByte = (v: number): number => Math.round(Math.min(Math.max(v, 0), 1) * 255);

export function planarToRgb(planar: Float32Array, width: number, height: number): Uint8Array {
  const pixels = width * height;
  if (planar.length !== pixels * 3) throw new Error(`expected ${pixels * 3} values, got ${planar.length}`);
  const rgb = new Uint8Array(pixels * 3);
  for (let p = 0; p < pixels; p++) {
    rgb[3 * p] = toByte(planar[p] ?? 0);
    rgb[3 * p + 1] = toByte(planar[pixels + p] ?? 0);
    rgb[3 * p + 2] = toByte(planar[2 * pixels + p] ?? 0);
  }
  return rgb;
}
