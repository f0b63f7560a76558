// The decoded image as a PNG: [−1, 1] planar RGB → 8-bit interleaved → PNG by sharp (libpng with
// fixed settings, so the same pixels always give the same bytes).
import sharp from 'sharp';
import type { FloatTensor } from '../generation/diffusion-model.js';

/** Planar [1, 3, H, W] floats in [−1, 1] to interleaved RGB bytes, clamped and rounded. */
export function toRgbBytes(image: FloatTensor): { rgb: Uint8Array; width: number; height: number } {
  const [batch, channels, height, width] = image.dims as [number, number, number, number];
  if (batch !== 1 || channels !== 3) throw new Error(`expected [1, 3, H, W], got [${image.dims.join(', ')}]`);
  const plane = width * height;
  const rgb = new Uint8Array(plane * 3);
  for (let c = 0; c < 3; c++) {
    for (let p = 0; p < plane; p++) {
      const unit = Math.min(1, Math.max(0, image.data[c * plane + p]! / 2 + 0.5));
      rgb[p * 3 + c] = Math.round(unit * 255);
    }
  }
  return { rgb, width, height };
}

export async function encodePng(image: FloatTensor): Promise<Buffer> {
  const { rgb, width, height } = toRgbBytes(image);
  return sharp(rgb, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 6, adaptiveFiltering: false })
    .toBuffer();
}
