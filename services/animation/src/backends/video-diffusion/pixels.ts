// Pixels between ffmpeg's RGB24 (interleaved bytes) and the models' planar float tensors, as
// diffusers' processors convert them: [0, 255] → [0, 1] → CLIP-normalised for the image encoder,
// or → [−1, 1] for the VAE; decoded frames back by (x + 1)/2, clamped, × 255, rounded.
import type { SeededRandom } from '@switchboard/models';
import type { ClipPreprocessing } from './video-model.js';

/** Interleaved RGB24 → planar [3, pixels] with value v / 255 · scale + offset per channel. */
function planar(rgb: Uint8Array, scale: readonly number[], offset: readonly number[]): Float32Array {
  const pixels = rgb.length / 3;
  const out = new Float32Array(rgb.length);
  for (let c = 0; c < 3; c++) {
    const [s, o] = [scale[c]! / 255, offset[c]!];
    for (let i = 0; i < pixels; i++) out[c * pixels + i] = rgb[i * 3 + c]! * s + o;
  }
  return out;
}

/** CLIP's pixel_values for an RGB24 square already resized to `clip.size`: (v/255 − mean) / std. */
export function clipPixelValues(rgb: Uint8Array, clip: ClipPreprocessing): Float32Array {
  const scale = clip.std.map((s) => 1 / s);
  const offset = clip.mean.map((m, c) => -m / clip.std[c]!);
  return planar(rgb, scale, offset);
}

/**
 * The VAE encoder's input for an RGB24 picture: [3, height, width] in [−1, 1], plus
 * `strength` × standard normal noise (SVD's noise augmentation of the conditioning image), drawn
 * from `random` so a seed repeats it; drawn even at strength 0, as diffusers does, so the rest of
 * the seeded stream does not depend on the strength.
 */
export function vaePixels(rgb: Uint8Array, strength: number, random: SeededRandom): Float32Array {
  const pixels = planar(rgb, [2, 2, 2], [-1, -1, -1]);
  const noise = random.normals(pixels.length);
  for (let i = 0; i < pixels.length; i++) pixels[i]! += strength * noise[i]!;
  return pixels;
}

/** Frame `index` of decoded frames [n, 3, height, width] as RGB24 bytes. */
export function frameToRgb(frames: Float32Array, index: number, width: number, height: number): Uint8Array {
  const pixels = width * height;
  const base = index * 3 * pixels;
  const rgb = new Uint8Array(pixels * 3);
  for (let c = 0; c < 3; c++) {
    const plane = base + c * pixels;
    for (let i = 0; i < pixels; i++) {
      const unit = Math.min(1, Math.max(0, (frames[plane + i]! + 1) / 2));
      rgb[i * 3 + c] = Math.round(unit * 255);
    }
  }
  return rgb;
}
