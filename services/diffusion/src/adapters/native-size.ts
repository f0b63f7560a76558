// A pipeline's native image size (what it was trained at) from its diffusers configs; the pixel
// budget's default is a multiple of it (images/pixel-budget.ts).

/** Assumed when no config says: Stable Diffusion 1.x's 512×512. */
export const FALLBACK_NATIVE_SIDE = 512;

/** diffusers writes `sample_size` as one side or as [height, width]; anything else is ignored. */
function sides(value: unknown): [number, number] | undefined {
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;
  if (ok(value)) return [value, value];
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [height, width] = value as unknown[];
  return ok(height) && ok(width) ? [height, width] : undefined;
}

/** A pipeline's native image size in pixels. */
export interface NativeSize {
  readonly width: number;
  readonly height: number;
}

/**
 * Native width and height in pixels: unet/config.json's `sample_size` (latent cells) times the VAE
 * scale factor on each side, else vae_decoder/config.json's `sample_size` (pixels), else 512×512.
 * The UNet comes first because it is what the pipeline was trained at (SDXL's UNet says 128, so
 * 1024); older exports without per-component configs get the SD 1.x size.
 */
export function nativeSize(
  unetConfig: Record<string, unknown>,
  vaeConfig: Record<string, unknown>,
  vaeScaleFactor: number,
): NativeSize {
  const latent = sides(unetConfig['sample_size']);
  if (latent) return { height: latent[0] * vaeScaleFactor, width: latent[1] * vaeScaleFactor };
  const pixels = sides(vaeConfig['sample_size']);
  if (pixels) return { height: pixels[0], width: pixels[1] };
  return { width: FALLBACK_NATIVE_SIDE, height: FALLBACK_NATIVE_SIDE };
}

/** Native width × height in pixels (what the pixel budget scales). */
export function nativePixels(
  unetConfig: Record<string, unknown>,
  vaeConfig: Record<string, unknown>,
  vaeScaleFactor: number,
): number {
  const { width, height } = nativeSize(unetConfig, vaeConfig, vaeScaleFactor);
  return width * height;
}
