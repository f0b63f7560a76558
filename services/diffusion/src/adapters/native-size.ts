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

/**
 * Native width × height in pixels: unet/config.json's `sample_size` (latent cells) times the VAE
 * scale factor on each side, else vae_decoder/config.json's `sample_size` (pixels), else 512×512.
 * The UNet comes first because it is what the pipeline was trained at (SDXL's UNet says 128, so
 * 1024); older exports without per-component configs get the SD 1.x size.
 */
export function nativePixels(
  unetConfig: Record<string, unknown>,
  vaeConfig: Record<string, unknown>,
  vaeScaleFactor: number,
): number {
  const latent = sides(unetConfig['sample_size']);
  if (latent) return latent[0] * vaeScaleFactor * latent[1] * vaeScaleFactor;
  const pixels = sides(vaeConfig['sample_size']);
  if (pixels) return pixels[0] * pixels[1];
  return FALLBACK_NATIVE_SIDE * FALLBACK_NATIVE_SIDE;
}
