// The pixel budget: the most width × height one request may ask of a model. Activation memory
// grows with the pixel count (and self-attention with its square), so a pod sized for a model
// must be able to refuse sizes it was not sized for, before anything is allocated.
import { SwitchboardError } from '@switchboard/errors';

/**
 * Multiple of a model's native pixel count allowed by default. 4 (twice the native side) is the
 * smallest factor that keeps the API's default request, 1024×1024, working on every common
 * 512-pixel export (SD 1.x, SD 2.x base, SD-Turbo, SDXL-Turbo); on SDXL (native 1024) it allows
 * 2048×2048, which is already the API's largest size, so it refuses nothing extra there.
 */
export const NATIVE_PIXELS_FACTOR = 4;

/** DIFFUSION_MAX_PIXELS as configured: per model id, with `fallback` for models not named. */
export interface PixelBudgets {
  readonly fallback?: number | undefined;
  readonly models: Readonly<Record<string, number>>;
}

/** A model's budget: configured for its id, else configured for all, else derived from its config. */
export function pixelBudget(modelId: string, nativePixels: number, budgets: PixelBudgets): number {
  return Object.hasOwn(budgets.models, modelId)
    ? budgets.models[modelId]!
    : (budgets.fallback ?? nativePixels * NATIVE_PIXELS_FACTOR);
}

/**
 * Model ids DIFFUSION_MAX_PIXELS names that the repository lacks: a typo there would otherwise
 * leave that model on its default budget without a word, so the worker refuses to start.
 */
export function unknownBudgetModels(budgets: PixelBudgets, modelIds: readonly string[]): string[] {
  return Object.keys(budgets.models).filter((id) => !modelIds.includes(id));
}

/**
 * Refuses a size over the budget. The error names the longer side (width when square): it is
 * the one a client should shrink, since halving it halves the pixels while keeping the image
 * closer to square, which is what these models are trained on.
 */
export function checkPixelBudget(
  size: { readonly width: number; readonly height: number },
  budget: number,
  sideMultiple: number,
): void {
  const { width, height } = size;
  const pixels = width * height;
  if (pixels <= budget) return;
  const param = width >= height ? 'width' : 'height';
  // The largest allowed square, as an example a client can send as is.
  const side = Math.floor(Math.sqrt(budget) / sideMultiple) * sideMultiple;
  throw new SwitchboardError('invalid_request', {
    param,
    message:
      `${param}: ${width}×${height} is ${pixels} pixels; this model allows at most ${budget} ` +
      `pixels (width × height), e.g. ${side}×${side}`,
  });
}
